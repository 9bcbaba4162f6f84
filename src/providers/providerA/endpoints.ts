import { tooManyMessages, tooManyRawMessages } from "../../domain/requestBounds"
import { forwardedEndpoint } from "../forwardedEndpoint"
import { ChatCompletion, ChatCompletionRequest } from "./chatCompletionsWire"
import { providerA } from "./dialect"
import { chatCompletionsProtocol, embeddingsProtocol } from "./protocol"
import { CreateEmbeddingResponse, EmbeddingRequest } from "./embeddingsWire"

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
