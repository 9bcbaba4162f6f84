// Bedrock's stream framing: binary event-stream messages (prelude, headers, payload, CRCs). Each event of the
// messages stream is one `chunk` whose payload is `{"bytes": base64(<the event's JSON>)}`.
import { EventStreamCodec } from "@smithy/eventstream-codec"
import { fromUtf8, toUtf8 } from "@smithy/util-utf8"
import { type BedrockException, exceptionFrameType } from "./errors"

// A codec per frame: its decoding buffer is state, and encoding one is cheap.
const encode = (message: Parameters<EventStreamCodec["encode"]>[0]) => new EventStreamCodec(toUtf8, fromUtf8).encode(message)

const text = (value: string) => ({ type: "string" as const, value })

/** One event of the messages stream (its JSON text) as a chunk frame. */
export const chunkFrame = (json: string): Uint8Array =>
  encode({
    headers: { ":event-type": text("chunk"), ":content-type": text("application/json"), ":message-type": text("event") },
    body: fromUtf8(JSON.stringify({ bytes: Buffer.from(json, "utf8").toString("base64") }))
  })

/** An exception in the middle of a stream: the frame Bedrock sends before it ends the stream. */
export const exceptionFrame = (exception: BedrockException): Uint8Array =>
  encode({
    headers: {
      ":exception-type": text(exceptionFrameType(exception)),
      ":content-type": text("application/json"),
      ":message-type": text("exception")
    },
    body: fromUtf8(JSON.stringify({ message: exception.message }))
  })
