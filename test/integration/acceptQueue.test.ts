import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/fakeUpstream"
import { type ServiceProcess, startBuiltService } from "../support/serviceProcess"

/** More than Node's default accept queue (511): the connections beyond it would be dropped at the handshake. */
const burst = 600

const connect = (port: number) => {
  const socket = net.connect({ port, host: "127.0.0.1" })
  const state = { connected: false, answer: "" }
  socket.on("connect", () => void (state.connected = true))
  socket.on("data", (chunk: Buffer) => void (state.answer += chunk.toString("latin1")))
  socket.on("error", () => {})
  return { socket, state }
}

// A burst of new clients while the service's event loop is busy waits in the kernel's accept queue. With Node's
// default queue of 511, the handshakes beyond it were dropped, and each such client waited a SYN retransmission
// (1 s, then 3 s) before the service saw it. The built service is stopped (SIGSTOP) to stand for a busy loop.
describe("the accept queue, with the built service", () => {
  let service: ServiceProcess
  let port: number

  beforeAll(async () => {
    const started = await startBuiltService("accept-queue", { SERVER_MAX_CONNECTIONS: "2048", SERVER_MAX_CONNECTIONS_PER_ADDRESS: "0" })
    service = started.service
    port = started.port
  }, 180_000)
  afterAll(async () => {
    if (service === undefined) return
    service.child.kill("SIGCONT")
    service.child.kill("SIGTERM")
    await service.exited
  })

  it("holds a burst beyond Node's default queue while the service cannot accept, and answers every connection of it", async () => {
    service.child.kill("SIGSTOP")
    const clients = Array.from({ length: burst }, () => connect(port))
    try {
      // The kernel completes every handshake the queue has room for, the process stopped or not.
      const connected = await eventually(() => clients.filter((client) => client.state.connected).length, (n) => n === burst, 5_000)
        .catch(() => clients.filter((client) => client.state.connected).length)
      expect(connected).toBe(burst)
    } finally {
      service.child.kill("SIGCONT")
    }
    for (const { socket } of clients) socket.write("GET /healthz HTTP/1.1\r\nhost: service\r\nconnection: close\r\n\r\n")
    const answered = await eventually(
      () => clients.filter((client) => client.state.answer.startsWith("HTTP/1.1 200")).length,
      (n) => n === burst,
      30_000
    )
    expect(answered).toBe(burst)
    for (const { socket } of clients) socket.destroy()
  }, 60_000)
})
