import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface SeenRequest {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

export interface FakeUpstream {
  readonly url: string
  readonly seen: Array<SeenRequest>
  /** Requests whose client (the service) closed the connection before the answer ended. */
  readonly closedEarly: () => number
  readonly close: () => Promise<void>
}

/**
 * A programmable upstream for tests that must see what the service sends, or that the service
 * hung up: the handler writes whatever answer the test needs.
 */
export const startFakeUpstream = async (
  handler: (request: SeenRequest, response: http.ServerResponse) => void
): Promise<FakeUpstream> => {
  const seen: Array<SeenRequest> = []
  let closedEarly = 0
  const server = http.createServer((req, res) => {
    let text = ""
    req.on("data", (chunk: Buffer) => void (text += chunk.toString()))
    req.on("end", () => {
      const request = { path: req.url ?? "", headers: req.headers, body: text === "" ? undefined : JSON.parse(text) }
      seen.push(request)
      res.on("close", () => {
        if (!res.writableFinished) closedEarly += 1
      })
      handler(request, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    closedEarly: () => closedEarly,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Waits until a condition holds (polling), or fails after the timeout. */
export const eventually = async <A>(probe: () => Promise<A> | A, accept: (value: A) => boolean, timeoutMs = 10_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last = await probe()
  while (!accept(last)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value ${JSON.stringify(last)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    last = await probe()
  }
  return last
}

/** A chat completion answer as the provider sends it, with the given usage. */
export const chatCompletionAnswer = (
  usage: Record<string, number> = { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }
): string =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "chatgen-4o",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop", logprobs: null }],
    usage
  })
