import { tooManyMessages, tooManyRawMessages } from "../../domain/requestBounds"
import { forwardedEndpoint } from "../forwardedEndpoint"
import { providerB } from "./dialect"
import { countTokensProtocol, messagesProtocol } from "./protocol"
import { CountTokensRequest, Message, MessagesRequest, MessageTokensCount } from "./messagesWire"

/** The caller's anthropic-version header is not read (the service speaks its own version upstream); anthropic-beta is passed on. */
export const messages = forwardedEndpoint({
  name: "messages",
  provider: providerB,
  path: "/v1/messages",
  payload: MessagesRequest,
  success: Message,
  description: "With `stream: true` the answer is text/event-stream of named events (message_start … message_stop).",
  protocol: messagesProtocol,
  operation: "messages",
  family: "messages",
  record: "messages",
  bound: (body, catalog) => tooManyMessages(catalog, "provider_b", "messages", body),
  scan: (body, catalog) => tooManyRawMessages(catalog, "provider_b", "messages", body),
  passedHeaders: ["anthropic-beta"]
})

/** Counting a messages request's input tokens: forwarded and rate-limited as a messages request, but not a completion. */
export const countTokens = forwardedEndpoint({
  name: "countTokens",
  provider: providerB,
  path: "/v1/messages/count_tokens",
  payload: CountTokensRequest,
  success: MessageTokensCount,
  description: "Counts the input tokens of a messages request (messages, system prompt, tools) without creating a message.",
  protocol: countTokensProtocol,
  operation: "count_tokens",
  family: "messages",
  // No `record`: a count is not a completion, so it leaves no row in the usage ledger.
  bound: (body, catalog) => tooManyMessages(catalog, "provider_b", "messages", body),
  scan: (body, catalog) => tooManyRawMessages(catalog, "provider_b", "messages", body),
  passedHeaders: ["anthropic-beta"]
})
