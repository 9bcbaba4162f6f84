import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, createKey, createWorkspace, type RunningApp, startApp, testAdminToken } from "../support/app"
import { eventually } from "../support/fakeUpstream"

/**
 * Connection exhaustion and credential guessing without authentication (issue 13, defect 11):
 * slow-header and idle sockets are cut, connections beyond the maximum are refused, and an address
 * that keeps presenting wrong credentials is answered 429 without a key lookup (its valid ones pass:
 * issue 24, test/integration/failedCredentials.test.ts).
 */

/** Resolves when the socket closes, with how long after `since` it did. */
const closedAfter = (socket: net.Socket, since: number) =>
  new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now() - since)))

const connect = (port: number) =>
  new Promise<net.Socket>((resolve, reject) => {
    // Flowing, so that the server's end (or its 408) is read and the socket closes.
    const socket = net.connect(port, "127.0.0.1", () => resolve(socket)).resume()
    socket.once("error", reject)
  })

describe("server limits and failed-credential throttling", () => {
  let app: RunningApp
  let port: number
  let key: string

  beforeAll(async () => {
    app = await startApp({
      SERVER_HEADERS_TIMEOUT_MS: "1000",
      SERVER_REQUEST_TIMEOUT_MS: "2000",
      SERVER_KEEP_ALIVE_TIMEOUT_MS: "1000",
      SERVER_MAX_CONNECTIONS: "12",
      AUTH_FAILURE_LIMIT: "5",
      AUTH_FAILURE_WINDOW_SECONDS: "3"
    })
    port = Number(new URL(app.origin).port)
    const workspace = await createWorkspace(app)
    key = (await createKey(app, workspace.id, ["COMPLETION_API"])).key
  })
  afterAll(async () => {
    await app?.stop()
  })

  it("cuts a socket whose headers never end", async () => {
    const socket = await connect(port)
    const closed = closedAfter(socket, Date.now())
    socket.on("error", () => {})
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n")
    // 1 s headers timeout; without it a slow-header socket lives a minute.
    expect(await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 15_000))])).toBeLessThan(15_000)
  }, 20_000)

  it("closes an idle keep-alive socket after its timeout", async () => {
    const socket = await connect(port)
    socket.on("error", () => {})
    let answered = 0
    socket.on("data", () => void (answered = Date.now()))
    const closed = closedAfter(socket, Date.now())
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    const after = await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 15_000))])
    expect(answered).toBeGreaterThan(0)
    expect(after).toBeLessThan(15_000)
  }, 20_000)

  it("refuses connections beyond the maximum", async () => {
    // At once, well within the 1 s headers timeout: 30 sockets against a maximum of 12 (the test's
    // own keep-alive connections count too).
    const sockets = await Promise.all(Array.from({ length: 30 }, () => connect(port)))
    // A refused connection is closed without a byte; one cut by the headers timeout gets its 408 first.
    let refused = 0
    for (const socket of sockets) {
      socket.on("error", () => {})
      let answered = false
      socket.once("data", () => void (answered = true))
      socket.once("close", () => void (refused += answered ? 0 : 1))
    }
    await eventually(() => refused, (n) => n >= 18 - 4)
    for (const socket of sockets) socket.destroy()
    // Once they are gone, the service answers again.
    await eventually(() => call(app, "GET", "/healthz").then((answer) => answer.status, () => 0), (status) => status === 200)
  })

  it("answers 429 to an address that keeps presenting wrong API keys, never to its valid key, then forgives it", async () => {
    const ask = (apiKey: string) =>
      call(app, "POST", "/provider_a/eu/v1/chat/completions", {
        token: apiKey,
        body: { model: "chatgen-4o", messages: [{ role: "user", content: "hi" }] }
      })
    for (let i = 0; i < 5; i++) expect((await ask(`wsk_${"a".repeat(40)}${i}`)).status).toBe(401)
    const throttled = await ask(`wsk_${"b".repeat(41)}`)
    expect(throttled.status).toBe(429)
    expect(throttled.body.error).toMatchObject({ type: "rate_limit_error", code: "too_many_failed_credentials" })
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0)
    // A good key from the same address passes: only keys not known to be valid are refused.
    expect((await ask(key)).status).toBe(200)
    // The exports' (HttpApi) routes answer the same, in their format.
    const exported = await call(app, "POST", "/export/users", { token: `wsk_${"c".repeat(43)}`, body: { from: "2026-01-01", to: "2026-01-02" } })
    expect(exported.status).toBe(429)
    expect(exported.body).toMatchObject({ success: false, error: { code: "too_many_failed_credentials" } })
    await new Promise((resolve) => setTimeout(resolve, 3_200))
    expect((await ask(`wsk_${"b".repeat(41)}`)).status).toBe(401)
  }, 20_000)

  it("answers 429 to an address that keeps guessing the admin token, never to the token itself", async () => {
    const create = (token: string) => call(app, "POST", "/admin/workspaces", { token, body: { name: "Guessed" } })
    for (let i = 0; i < 5; i++) expect((await create(`guess-${i}-0123456789abcdef`)).status).toBe(401)
    const throttled = await create("guess-6-0123456789abcdef")
    expect(throttled.status).toBe(429)
    expect(throttled.body).toMatchObject({ error: { code: "too_many_failed_credentials" } })
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await create(testAdminToken)).status).toBe(201)
    await new Promise((resolve) => setTimeout(resolve, 3_200))
    expect((await create("guess-7-0123456789abcdef")).status).toBe(401)
  }, 20_000)
})
