import { HttpApiBuilder } from "@effect/platform"
import { Effect, FiberRef } from "effect"
import { WorkspaceApi } from "../api/Api"
import { CurrentPrincipal } from "../api/security"
import { currentRequestId } from "../http/currentRequestId"
import { respond } from "../http/forwardedResponse"
import { ChatCompletions } from "../services/ChatCompletions"
import { Embeddings } from "../services/Embeddings"
import { notImplemented } from "./notYet"

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

export const ProviderBHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_b", (handlers) =>
  handlers.handle("messages", () => notImplemented("provider_b", "Messages")))

export const ProviderCHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_c", (handlers) =>
  handlers.handle("fimCompletions", () => notImplemented("provider_c", "FIM completion")))
