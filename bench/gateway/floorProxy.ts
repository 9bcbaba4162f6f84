// The floor: the least a Node gateway can cost. node:http in, undici Pool out, bodies piped both ways,
// no parsing, no auth. FLOOR_PORT, FLOOR_UPSTREAM (e.g. http://127.0.0.1:8090), FLOOR_CONNECTIONS (the upstream
// pool's size, 64: raised by the concurrent-streams benchmark, whose streams would otherwise wait for one).
import * as http from "node:http"
import { Pool } from "undici"

const upstream = process.env.FLOOR_UPSTREAM ?? "http://127.0.0.1:8090"
const port = Number(process.env.FLOOR_PORT ?? "8091")
const pool = new Pool(upstream, { connections: Number(process.env.FLOOR_CONNECTIONS ?? "64"), pipelining: 1 })

/** The caller's headers, minus the hop-by-hop ones and its credentials. */
const forwardedHeaders = (incoming: http.IncomingHttpHeaders): Record<string, string> => {
  const headers: Record<string, string> = { authorization: "Bearer floor" }
  for (const [name, value] of Object.entries(incoming)) {
    if (typeof value === "string" && !/^(host|connection|content-length|authorization|keep-alive)$/.test(name)) headers[name] = value
  }
  return headers
}

const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    pool.request({
      method: "POST",
      path: req.url ?? "/",
      headers: forwardedHeaders(req.headers),
      body: Buffer.concat(chunks)
    }).then(
      (answer) => {
        const contentType = answer.headers["content-type"]
        res.writeHead(answer.statusCode, typeof contentType === "string" ? { "content-type": contentType } : {})
        answer.body.on("data", (chunk: Buffer) => res.write(chunk))
        answer.body.on("end", () => res.end())
        answer.body.on("error", () => res.destroy())
      },
      () => {
        res.writeHead(502).end()
      }
    )
  })
})

server.listen(port, "127.0.0.1", () => process.stdout.write(`floor proxy on ${port}\n`))
