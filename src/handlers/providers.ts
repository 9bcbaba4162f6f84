import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, FiberRef } from "effect"
import { WorkspaceApi } from "../api/Api"
import { CurrentPrincipal } from "../api/security"
import { currentRequestId } from "../http/currentRequestId"
import { respond } from "../http/forwardedResponse"
import { ChatCompletions } from "../providers/providerA/ChatCompletions"
import { Embeddings } from "../providers/providerA/Embeddings"
import { FimCompletions } from "../providers/providerC/FimCompletions"
import { Messages } from "../providers/providerB/Messages"
import { providerA } from "../providers/providerA/dialect"
import { providerB } from "../providers/providerB/dialect"
import { providerC } from "../providers/providerC/dialect"

/** The caller and the request id, which every forwarded request is recorded with. */
const caller = Effect.all({ principal: CurrentPrincipal, requestId: FiberRef.get(currentRequestId) })

export const ProviderAHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_a", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* ChatCompletions
    const embeddings = yield* Embeddings
    return handlers
      .handle("chatCompletions", ({ path, payload }) =>
        Effect.flatMap(caller, ({ principal, requestId }) =>
          respond(providerA, chat.create(principal, path.region, payload, requestId))))
      .handle("embeddings", ({ path, payload }) =>
        Effect.flatMap(caller, ({ principal, requestId }) =>
          respond(providerA, embeddings.create(principal, path.region, payload, requestId))))
  }))

/** The caller's anthropic-version header is not read (the service speaks its own version upstream); anthropic-beta is passed on. */
export const ProviderBHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_b", (handlers) =>
  Effect.map(Messages, (messages) =>
    handlers.handle("messages", ({ path, payload }) =>
      Effect.flatMap(Effect.zip(caller, HttpServerRequest.HttpServerRequest), ([{ principal, requestId }, request]) =>
        respond(providerB, messages.create(principal, path.region, payload, requestId, request.headers["anthropic-beta"]))))))

export const ProviderCHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_c", (handlers) =>
  Effect.map(FimCompletions, (fim) =>
    handlers.handle("fimCompletions", ({ path, payload }) =>
      Effect.flatMap(caller, ({ principal, requestId }) =>
        respond(providerC, fim.create(principal, path.region, payload, requestId))))))
