import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { providerAErrorSchema } from "../providers/providerA/error"
import { providerBErrorSchema } from "../providers/providerB/error"
import { providerCErrorSchema } from "../providers/providerC/error"
import { ChatCompletion, ChatCompletionRequest } from "../providers/providerA/chatCompletionsWire"
import { CreateEmbeddingResponse, EmbeddingRequest } from "../providers/providerA/embeddingsWire"
import { FimCompletionRequest, FimCompletionResponse } from "../providers/providerC/fimWire"
import { Message, MessagesRequest } from "../providers/providerB/messagesWire"
import { ProviderAAuth, ProviderBAuth, ProviderCAuth } from "./security"

/** Any string: an unknown region is answered with 404 by the handler, in the endpoint's format. */
const region = HttpApiSchema.param("region", Schema.String)

/** provider_a: chat completions and embeddings, in the chat-completions wire format. */
export class ProviderAApi extends HttpApiGroup.make("provider_a")
  .add(
    HttpApiEndpoint.post("chatCompletions")`/provider_a/${region}/v1/chat/completions`
      .setPayload(ChatCompletionRequest)
      .addSuccess(ChatCompletion)
      .annotate(OpenApi.Description, "With `stream: true` the answer is text/event-stream of chat.completion.chunk objects ending with `data: [DONE]`.")
  )
  .add(
    HttpApiEndpoint.post("embeddings")`/provider_a/${region}/v1/embeddings`
      .setPayload(EmbeddingRequest)
      .addSuccess(CreateEmbeddingResponse)
  )
  .addError(providerAErrorSchema)
  .middleware(ProviderAAuth)
{}

/** provider_b: messages, in the messages wire format. */
export class ProviderBApi extends HttpApiGroup.make("provider_b")
  .add(
    HttpApiEndpoint.post("messages")`/provider_b/${region}/v1/messages`
      .setPayload(MessagesRequest)
      .addSuccess(Message)
      .annotate(OpenApi.Description, "With `stream: true` the answer is text/event-stream of named events (message_start … message_stop).")
  )
  .addError(providerBErrorSchema)
  .middleware(ProviderBAuth)
{}

/** provider_c: fill-in-the-middle code completion, in the FIM wire format. */
export class ProviderCApi extends HttpApiGroup.make("provider_c")
  .add(
    HttpApiEndpoint.post("fimCompletions")`/provider_c/${region}/v1/fim/completions`
      .setPayload(FimCompletionRequest)
      .addSuccess(FimCompletionResponse)
      .annotate(OpenApi.Description, "With `stream: true` the answer is data-only text/event-stream ending with `data: [DONE]`.")
  )
  .addError(providerCErrorSchema)
  .middleware(ProviderCAuth)
{}
