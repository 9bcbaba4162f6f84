// The floor in the service's own stack: the floor proxy (floorProxy.ts: node:http in, undici Pool out, no parsing,
// no auth) with each request served as an Effect fiber the way the forwarding lane serves one — forked from a runtime,
// the body read, the upstream asked and its answer read each in an asynchronous step with a canceller, the client's
// going away interrupting the fiber, an observer at its end. What this costs over the floor is what running a request
// in Effect costs before any of the gateway's own work. EFFECT_FLOOR_PORT, FLOOR_UPSTREAM, FLOOR_CONNECTIONS.
import { Effect, FiberId, Runtime } from "effect"
import * as http from "node:http"
import { Pool } from "undici"

const upstream = process.env.FLOOR_UPSTREAM ?? "http://127.0.0.1:8090"
const port = Number(process.env.EFFECT_FLOOR_PORT ?? "8092")
const pool = new Pool(upstream, { connections: Number(process.env.FLOOR_CONNECTIONS ?? "64"), pipelining: 1 })
const runFork = Runtime.runFork(Runtime.defaultRuntime)

/** The caller's headers, minus the hop-by-hop ones and its credentials (as the floor sends them). */
const forwardedHeaders = (incoming: http.IncomingHttpHeaders): Record<string, string> => {
  const headers: Record<string, string> = { authorization: "Bearer floor" }
  for (const [name, value] of Object.entries(incoming)) {
    if (typeof value === "string" && !/^(host|connection|content-length|authorization|keep-alive)$/.test(name)) headers[name] = value
  }
  return headers
}

const readBody = (request: http.IncomingMessage) =>
  Effect.async<Buffer>((resume) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.once("end", () => resume(Effect.succeed(Buffer.concat(chunks))))
    return Effect.sync(() => request.destroy())
  })

const ask = (path: string, headers: Record<string, string>, body: Buffer) =>
  Effect.async<{ readonly status: number; readonly contentType: string | undefined; readonly body: Buffer }, Error>((resume) => {
    const controller = new AbortController()
    pool.request({ method: "POST", path, headers, body, signal: controller.signal }).then(
      (answer) => {
        const chunks: Array<Buffer> = []
        answer.body.on("data", (chunk: Buffer) => chunks.push(chunk))
        answer.body.once("end", () => {
          const contentType = answer.headers["content-type"]
          resume(Effect.succeed({ status: answer.statusCode, contentType: typeof contentType === "string" ? contentType : undefined, body: Buffer.concat(chunks) }))
        })
        answer.body.once("error", (error) => resume(Effect.fail(error)))
      },
      (error: Error) => resume(Effect.fail(error))
    )
    return Effect.sync(() => controller.abort())
  })

const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const served = Effect.flatMap(readBody(req), (body) => ask(req.url ?? "/", forwardedHeaders(req.headers), body)).pipe(
    Effect.match({
      onFailure: () => void res.writeHead(502).end(),
      onSuccess: (answer) => {
        res.writeHead(answer.status, answer.contentType === undefined ? {} : { "content-type": answer.contentType })
        res.end(answer.body)
      }
    })
  )
  const fiber = runFork(served)
  fiber.addObserver(() => {})
  res.on("close", () => {
    if (!res.writableEnded) fiber.unsafeInterruptAsFork(FiberId.none)
  })
})

server.listen(port, "127.0.0.1", () => process.stdout.write(`effect floor proxy on ${port}\n`))
