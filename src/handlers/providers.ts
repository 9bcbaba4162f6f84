import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, FiberRef } from "effect"
import { WorkspaceApi } from "../api/Api"
import { CurrentPrincipal } from "../api/security"
import { currentRequestId } from "../http/currentRequestId"
import { respond } from "../http/forwardedResponse"
import { ChatCompletions } from "../services/ChatCompletions"
import { Embeddings } from "../services/Embeddings"
import { FimCompletions } from "../services/FimCompletions"
import { Messages } from "../services/Messages"

/** The caller and the request id, which every forwarded request is recorded with. */
const caller = Effect.all({ principal: CurrentPrincipal, requestId: FiberRef.get(currentRequestId) })

export const ProviderAHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_a", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* ChatCompletions
    const embeddings = yield* Embeddings
    return handlers
      .handle("chatCompletions", ({ path, payload }) =>
        Effect.flatMap(caller, ({ principal, requestId }) =>
          respond("provider_a", chat.create(principal, path.region, payload, requestId))))
      .handle("embeddings", ({ path, payload }) =>
        Effect.flatMap(caller, ({ principal, requestId }) =>
          respond("provider_a", embeddings.create(principal, path.region, payload, requestId))))
  }))

/** The caller's anthropic-version header is not read (the service speaks its own version upstream); anthropic-beta is passed on. */
export const ProviderBHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_b", (handlers) =>
  Effect.map(Messages, (messages) =>
    handlers.handle("messages", ({ path, payload }) =>
      Effect.flatMap(Effect.zip(caller, HttpServerRequest.HttpServerRequest), ([{ principal, requestId }, request]) =>
        respond("provider_b", messages.create(principal, path.region, payload, requestId, request.headers["anthropic-beta"]))))))

export const ProviderCHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_c", (handlers) =>
  Effect.map(FimCompletions, (fim) =>
    handlers.handle("fimCompletions", ({ path, payload }) =>
      Effect.flatMap(caller, ({ principal, requestId }) =>
        respond("provider_c", fim.create(principal, path.region, payload, requestId))))))
