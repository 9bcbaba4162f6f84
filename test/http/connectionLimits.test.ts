import * as http from "node:http"
import * as net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { limitConnections } from "../../src/http/connectionLimits"

/** A Node HTTP server with the limits, answering every request with 200. */
const serve = async (unlimited: (address: string) => boolean = () => false) => {
  const server = http.createServer((_, response) => response.end("ok"))
  limitConnections(server, { perAddress: 3, firstByteMs: 300, unlimited })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  servers.push(server)
  return (server.address() as net.AddressInfo).port
}
const servers: Array<http.Server> = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

interface Watched {
  readonly socket: net.Socket
  readonly closed: () => boolean
  readonly closing: Promise<void>
}

const connect = (port: number, localAddress: string) =>
  new Promise<Watched>((resolve) => {
    let closed = false
    // Flowing, so that an answer is read and the server's close is seen.
    const socket = net.connect({ port, host: "127.0.0.1", localAddress }).resume()
    socket.on("error", () => {})
    const closing = new Promise<void>((done) => socket.once("close", () => {
      closed = true
      done()
    }))
    socket.once("connect", () => resolve({ socket, closed: () => closed, closing }))
  })

/** Lets the server handle what is pending: a round trip of a fresh connection from another address. */
const roundTrip = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.9" }, () =>
      socket.end("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    let text = ""
    socket.on("data", (chunk) => void (text += chunk.toString()))
    socket.once("close", () => resolve(text))
  })

describe("connection limits", () => {
  it("closes the connections of one address beyond its limit at once, and nobody else's", async () => {
    const port = await serve()
    const hog = await Promise.all(Array.from({ length: 5 }, () => connect(port, "127.0.0.1")))
    const other = await Promise.all(Array.from({ length: 3 }, () => connect(port, "127.0.0.2")))
    expect(await roundTrip(port)).toMatch(/^HTTP\/1\.1 200/)
    expect(hog.filter((c) => c.closed())).toHaveLength(2)
    expect(other.filter((c) => c.closed())).toHaveLength(0)
    // A closed one frees its place (once the server has seen it close).
    const kept = hog.filter((c) => !c.closed())
    kept[0]!.socket.destroy()
    let again = await connect(port, "127.0.0.1")
    for (let tries = 0; tries < 20; tries++) {
      await roundTrip(port)
      if (!again.closed()) break
      again = await connect(port, "127.0.0.1")
    }
    expect(again.closed()).toBe(false)
    for (const c of [...hog, ...other, again]) c.socket.destroy()
  })

  it("does not limit an address it is told carries many clients (a trusted proxy)", async () => {
    const port = await serve((address) => address === "127.0.0.3")
    const proxy = await Promise.all(Array.from({ length: 6 }, () => connect(port, "127.0.0.3")))
    expect(await roundTrip(port)).toMatch(/^HTTP\/1\.1 200/)
    expect(proxy.map((c) => c.closed())).toEqual(Array.from({ length: 6 }, () => false))
    for (const c of proxy) c.socket.destroy()
  })

  it("closes a connection that sent no byte within the first-byte timeout, and keeps one that did", async () => {
    const port = await serve()
    const silent = await connect(port, "127.0.0.4")
    const talking = await connect(port, "127.0.0.5")
    // Headers begun, not ended: Node's own headers timeout (not this one) is what bounds it.
    talking.socket.write("GET / HTTP/1.1\r\n")
    await silent.closing
    expect(talking.closed()).toBe(false)
    talking.socket.write("Host: x\r\nConnection: close\r\n\r\n")
    await talking.closing
    talking.socket.destroy()
  })
})
