import type * as http from "node:http"
import type { Socket } from "node:net"
import { normalizeAddress } from "../domain/clientAddress"

export interface ConnectionLimits {
  /** Open connections from one peer address at most; 0: no limit. */
  readonly perAddress: number
  /** A connection that has sent no byte within this is closed. */
  readonly firstByteMs: number
  /** Peers not limited per address: the proxies of TRUSTED_PROXIES, which carry many clients each. */
  readonly unlimited: (address: string) => boolean
}

/**
 * Connections one client cannot hoard. The server's maximum (SERVER_MAX_CONNECTIONS) is shared by
 * everyone: a client that opens thousands of sockets and sends nothing would otherwise hold every slot
 * until the headers timeout (10 s), and every other client would be refused meanwhile. So each peer
 * address may hold `perAddress` connections (more are closed as they arrive), and a connection that
 * has not sent its first byte within `firstByteMs` is closed (Node's headers timeout still bounds a
 * request whose headers have begun). The address is the connection's peer: a proxy named in
 * TRUSTED_PROXIES is not limited per address (its clients' own addresses are in a header, read after
 * the connection is taken); behind another proxy every client shares its address, so the limit is
 * raised (or 0) there.
 */
export const limitConnections = (server: http.Server, limits: ConnectionLimits): void => {
  const open = new Map<string, number>()
  server.on("connection", (socket: Socket) => {
    const address = normalizeAddress(socket.remoteAddress ?? "")
    if (limits.perAddress > 0 && !limits.unlimited(address)) {
      const count = (open.get(address) ?? 0) + 1
      if (count > limits.perAddress) {
        socket.destroy()
        return
      }
      open.set(address, count)
      socket.once("close", () => {
        const left = (open.get(address) ?? 1) - 1
        if (left <= 0) open.delete(address)
        else open.set(address, left)
      })
    }
    // bytesRead is counted by the socket's handle, which the HTTP parser reads directly.
    const silent = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy()
    }, limits.firstByteMs)
    silent.unref()
    socket.once("close", () => clearTimeout(silent))
  })
}
