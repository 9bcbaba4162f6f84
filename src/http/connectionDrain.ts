import type * as http from "node:http"
import type { Socket } from "node:net"
import { graceEnded } from "../handlers/graceEnded"

/** How long a response that ends itself at the grace has to write its last event before its connection is closed anyway. */
const lastWordsMs = 1_000

/**
 * Node's server.close() waits for every open connection, and closes only those idle after a
 * request: a connection a client opened ahead of time and never used keeps the server (and so the
 * shutdown) waiting. This tracks requests per socket so that, once draining starts, every socket
 * not serving a request is closed at once, and each busy one as soon as its last response ends.
 */
export const trackConnections = (server: http.Server) => {
  const inFlight = new Map<Socket, number>()
  const open = new Set<http.ServerResponse>()
  let draining = false
  const closeIfIdle = (socket: Socket) => {
    if (draining && (inFlight.get(socket) ?? 0) === 0) socket.destroy()
  }
  server.on("connection", (socket: Socket) => {
    inFlight.set(socket, 0)
    socket.once("close", () => inFlight.delete(socket))
    closeIfIdle(socket)
  })
  return {
    /** Counts a request on its connection until its response closes (call it for every request). */
    track: (request: http.IncomingMessage, response: http.ServerResponse) => {
      const socket = request.socket
      inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1)
      open.add(response)
      // A response closes once: `on` spares the wrapper `once` makes for every request.
      response.on("close", () => {
        open.delete(response)
        const count = inFlight.get(socket)
        // A client that went away mid-response closes the socket first, and it is forgotten then:
        // counting it again would keep it (with its request, response and their fibers) for good.
        if (count === undefined) return
        inFlight.set(socket, Math.max(0, count - 1))
        closeIfIdle(socket)
      })
    },
    /** Stops keeping idle connections: closes them now, and busy ones when their responses end. */
    drain: () => {
      draining = true
      for (const socket of inFlight.keys()) closeIfIdle(socket)
    },
    /** Connections currently kept (for tests). */
    tracked: () => inFlight.size,
    /**
     * Closes every connection, busy or not (after the grace period). The responses that end themselves
     * (graceEnded) get a moment to write their last event first; the others are cut now.
     */
    closeAll: () => {
      const ending = new Set<Socket>()
      for (const response of open) {
        const socket = response.socket
        if (socket !== null && response.emit(graceEnded)) ending.add(socket)
      }
      for (const socket of inFlight.keys()) if (!ending.has(socket)) socket.destroy()
      if (ending.size > 0) setTimeout(() => ending.forEach((socket) => socket.destroy()), lastWordsMs).unref()
    }
  }
}
