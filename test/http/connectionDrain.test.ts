import { afterEach, describe, expect, it } from "vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { graceEnded } from "../../src/handlers/graceEnded"
import { trackConnections } from "../../src/http/connectionDrain"
import { eventually } from "../support/fakeUpstream"

/** A server whose every answer is a stream that never ends, each request tracked as server.ts does. */
const streamingServer = async () => {
  const server = http.createServer()
  const tracker = trackConnections(server)
  const responsesClosed: Array<Promise<void>> = []
  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    tracker.track(request, response)
    responsesClosed.push(new Promise((resolve) => response.once("close", () => resolve())))
    response.writeHead(200, { "content-type": "text/event-stream" })
    response.write("data: first\n\n")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return { server, tracker, port, responsesClosed }
}

/** Opens a stream, reads its first chunk, then goes away (as a client aborting its fetch does). */
const abortAfterFirstChunk = (port: number) =>
  new Promise<void>((resolve, reject) => {
    const request = http.request({ port, host: "127.0.0.1", method: "POST", path: "/", agent: false }, (response) => {
      response.once("data", () => {
        request.destroy()
        resolve()
      })
    })
    request.on("error", (error) => (request.destroyed ? undefined : reject(error)))
    request.end()
  })

/** Time for close events scheduled on later ticks to run: only to show that a connection is still kept. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50))

let close: (() => void) | undefined
afterEach(() => {
  close?.()
  close = undefined
})

describe("connection tracking", () => {
  it("forgets the connection of a client that went away mid-stream (no socket, request or response kept)", async () => {
    const { server, tracker, port, responsesClosed } = await streamingServer()
    close = () => server.close()
    for (let i = 0; i < 20; i++) await abortAfterFirstChunk(port)
    await Promise.all(responsesClosed)
    expect(responsesClosed).toHaveLength(20)
    expect(await eventually(() => tracker.tracked(), (n) => n === 0, 5_000)).toBe(0)
  })

  it("keeps an idle keep-alive connection until it closes, and closes it on drain", async () => {
    const server = http.createServer({ keepAliveTimeout: 60_000 })
    const tracker = trackConnections(server)
    server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
      tracker.track(request, response)
      response.end("done")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    close = () => server.close()
    const { port } = server.address() as AddressInfo
    const agent = new http.Agent({ keepAlive: true })
    await new Promise<void>((resolve, reject) =>
      http.get({ port, host: "127.0.0.1", agent }, (response) => response.resume().once("end", resolve)).on("error", reject))
    await settle()
    expect(tracker.tracked()).toBe(1)
    tracker.drain()
    expect(await eventually(() => tracker.tracked(), (n) => n === 0, 5_000)).toBe(0)
    agent.destroy()
  })

  it("at the end of the grace lets a response that listens write its last words, and cuts the others", async () => {
    const server = http.createServer()
    const tracker = trackConnections(server)
    let served = 0
    server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
      served += 1
      tracker.track(request, response)
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write("data: first\n\n")
      // The first request's stream ends itself at the grace, as a relayed stream does.
      if (request.url === "/listens") response.once(graceEnded, () => response.end("data: last words\n\n"))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    close = () => server.close()
    const { port } = server.address() as AddressInfo
    const read = (path: string) =>
      new Promise<{ text: string; complete: boolean }>((resolve) => {
        let text = ""
        http.get({ port, host: "127.0.0.1", path, agent: false }, (response) => {
          response.on("data", (chunk: Buffer) => void (text += chunk.toString()))
          response.once("end", () => resolve({ text, complete: true }))
          response.once("error", () => resolve({ text, complete: false }))
        }).on("error", () => resolve({ text, complete: false }))
      })
    const listens = read("/listens")
    const silent = read("/silent")
    await eventually(() => served, (n) => n === 2)
    tracker.closeAll()
    expect(await listens).toEqual({ text: "data: first\n\ndata: last words\n\n", complete: true })
    expect(await silent).toEqual({ text: "data: first\n\n", complete: false })
  })
})

