import * as http from "node:http"
import type { Duplex } from "node:stream"

/** At most this much of a refused request is read and dropped (or for this long) after its answer. */
const discardAtMostBytes = 1024 * 1024
const discardAtMostMs = 5_000

const rawAnswer = (status: number, body: string): string =>
  `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
  `content-length: ${Buffer.byteLength(body)}\r\nx-content-type-options: nosniff\r\n\r\n${body}`

/** Node's own answers to the other requests it cannot parse (what it writes when nobody listens for clientError). */
const nodeDefault = (code: string | undefined): string =>
  code === "ERR_HTTP_REQUEST_TIMEOUT"
    ? "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n"
    : code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
    ? "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n"
    : "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"

/** The response Node is writing on a connection, if any: Node's own clientError answer checks the same. */
const responseOn = (socket: Duplex): http.ServerResponse | undefined => {
  const message: unknown = Reflect.get(socket, "_httpMessage")
  return message instanceof http.ServerResponse ? message : undefined
}

/**
 * Answers the requests Node's parser refuses before any handler sees them. A request line and headers over
 * Node's limit (a 100 KB URL) are answered 431 in the admin error format — and then, unlike Node's own
 * answer, the connection is not destroyed at once: a client still sending its URL would get a reset
 * (ECONNRESET) instead of the answer, since closing a socket with unread data resets it. The answer is
 * written, our side closed, and what the client still sends read and dropped (bounded in bytes and time)
 * until it closes too. Every other parse failure is answered as Node answers it.
 */
export const answerClientErrors = (server: http.Server): void => {
  const refused = new WeakSet<Duplex>()
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports again on every further chunk of a refused request: answered once.
    if (refused.has(socket)) return
    refused.add(socket)
    // An answer must not be written into a response already under way (a pipelined request's).
    if (error.code === "ECONNRESET" || !socket.writable || responseOn(socket)?.headersSent === true) return void socket.destroy()
    if (error.code !== "HPE_HEADER_OVERFLOW") {
      socket.write(nodeDefault(error.code))
      return void socket.destroy()
    }
    socket.write(rawAnswer(431, JSON.stringify({
      error: {
        code: "request_header_fields_too_large",
        message: `The request line and headers are larger than ${http.maxHeaderSize} bytes: send a shorter URL or fewer headers.`
      }
    })))
    socket.end()
    // The parser no longer reads this connection; the rest of the request is dropped as it comes.
    socket.removeAllListeners("data")
    let discarded = 0
    const cut = setTimeout(() => socket.destroy(), discardAtMostMs).unref()
    socket.on("data", (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > discardAtMostBytes) socket.destroy()
    })
    socket.once("close", () => clearTimeout(cut))
    socket.resume()
  })
}
