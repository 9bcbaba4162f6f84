import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServiceProcess, startBuiltService } from "../support/serviceProcess"

interface RawOutcome {
  /** The answer's status line and body as read. */
  readonly statusLine: string
  readonly body: string
  /** Whether the connection ended with the server's FIN (a clean close) rather than an error. */
  readonly error: string | undefined
}

/**
 * Sends a request whose line holds a URL of `size` bytes in one write, as curl does, and reads until the
 * connection closes. The client is another process than the service: that is where a server closing
 * with unread bytes resets the connection before the client has read the answer.
 */
const overlongRequest = (port: number, size: number) =>
  new Promise<RawOutcome>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let text = ""
    socket.on("connect", () => socket.write(`GET /healthz?pad=${"a".repeat(size)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))
    socket.on("data", (chunk: Buffer) => void (text += chunk.toString("latin1")))
    const outcome = (error: string | undefined): RawOutcome => ({
      statusLine: text.split("\r\n")[0] ?? "",
      body: text.slice(text.indexOf("\r\n\r\n") + 4),
      error
    })
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(outcome(error.code ?? error.message)))
    socket.on("close", (hadError) => {
      if (!hadError) resolve(outcome(undefined))
    })
  })

describe("a request line over Node's limit (a 100 KB URL)", () => {
  let service: ServiceProcess
  let port: number

  beforeAll(async () => {
    const started = await startBuiltService("overlong")
    service = started.service
    port = started.port
  })
  afterAll(async () => {
    service?.child.kill("SIGTERM")
    await service?.exited
  })

  it("is answered 431 in JSON, and the client reads the answer rather than a reset, every time", async () => {
    const outcomes: Array<RawOutcome> = []
    // Without draining the rest of the request, about half of these ended in ECONNRESET.
    for (let attempt = 0; attempt < 20; attempt++) outcomes.push(await overlongRequest(port, 100 * 1024))
    for (const outcome of outcomes) {
      expect(outcome).toEqual({
        statusLine: "HTTP/1.1 431 Request Header Fields Too Large",
        body: JSON.stringify({
          error: {
            code: "request_header_fields_too_large",
            message: "The request line and headers are larger than 16384 bytes: send a shorter URL or fewer headers."
          }
        }),
        error: undefined
      })
    }
  })

  it("answers fetch the same, and the service goes on answering", async () => {
    const answer = await fetch(`http://127.0.0.1:${port}/healthz?pad=${"a".repeat(100 * 1024)}`)
    expect(answer.status).toBe(431)
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("request_header_fields_too_large")
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
  })
})
