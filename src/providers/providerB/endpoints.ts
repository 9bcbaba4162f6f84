import { tooManyMessages, tooManyRawMessages } from "../../domain/requestBounds"
import { forwardedEndpoint } from "../forwardedEndpoint"
import { providerB } from "./dialect"
import { Message, MessagesRequest } from "./messagesWire"

/** The caller's anthropic-version header is not read (the service speaks its own version upstream); anthropic-beta is passed on. */
export const messages = forwardedEndpoint({
  name: "messages",
  provider: providerB,
  path: "/v1/messages",
  payload: MessagesRequest,
  success: Message,
  description: "With `stream: true` the answer is text/event-stream of named events (message_start … message_stop).",
  family: "messages",
  record: "messages",
  bound: (body) => tooManyMessages("provider_b", "messages", body),
  scan: (body) => tooManyRawMessages("provider_b", "messages", body),
  passedHeaders: ["anthropic-beta"]
})
