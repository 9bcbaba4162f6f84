import { tooManyMessages, tooManyRawMessages } from "../../domain/requestBounds"
import { forwardedEndpoint } from "../forwardedEndpoint"
import { ChatCompletion, ChatCompletionRequest } from "./chatCompletionsWire"
import { providerA } from "./dialect"
import { chatCompletionsProtocol, embeddingsProtocol } from "./protocol"
import { CreateEmbeddingResponse, EmbeddingRequest } from "./embeddingsWire"
import { responsesProtocol } from "./responsesProtocol"
import { ResponseObject, ResponsesRequest } from "./responsesWire"

export const chatCompletions = forwardedEndpoint({
  name: "chatCompletions",
  provider: providerA,
  path: "/v1/chat/completions",
  payload: ChatCompletionRequest,
  success: ChatCompletion,
  description: "With `stream: true` the answer is text/event-stream of chat.completion.chunk objects ending with `data: [DONE]`.",
  protocol: chatCompletionsProtocol,
  operation: "chat_completions",
  family: "chat_completions",
  record: "chat_completions",
  bound: (body, catalog) => tooManyMessages(catalog, "provider_a", "chat_completions", body),
  scan: (body, catalog) => tooManyRawMessages(catalog, "provider_a", "chat_completions", body),
  passedHeaders: []
})

export const embeddings = forwardedEndpoint({
  name: "embeddings",
  provider: providerA,
  path: "/v1/embeddings",
  payload: EmbeddingRequest,
  success: CreateEmbeddingResponse,
  protocol: embeddingsProtocol,
  operation: "embeddings",
  family: "embeddings",
  record: "embeddings",
  passedHeaders: []
})

export const responses = forwardedEndpoint({
  name: "responses",
  provider: providerA,
  path: "/v1/responses",
  payload: ResponsesRequest,
  success: ResponseObject,
  description: "With `stream: true` the answer is text/event-stream of typed events (`event:` and `data:` naming the same " +
    "type), from `response.created` to `response.completed`, `response.incomplete` or `response.failed`, which carry " +
    "the usage. A failure after the first event is an `error` event.",
  protocol: responsesProtocol,
  operation: "responses",
  family: "responses",
  record: "responses",
  passedHeaders: []
})
