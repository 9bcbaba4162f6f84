import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { providerA } from "../providers/providerA/dialect"
import { providerB } from "../providers/providerB/dialect"
import { providerC } from "../providers/providerC/dialect"
import { forwardedServices, handlerOf } from "./forwarded"

// Each group's handlers, made from the served list (src/handlers/forwarded.ts) the forwarding lane also serves from.

export const ProviderAHandlers = HttpApiBuilder.group(WorkspaceApi, providerA.id, (handlers) =>
  Effect.map(forwardedServices, (served) =>
    handlers
      .handle(served.chatCompletions.endpoint.name, handlerOf(served.chatCompletions))
      .handle(served.embeddings.endpoint.name, handlerOf(served.embeddings))))

export const ProviderBHandlers = HttpApiBuilder.group(WorkspaceApi, providerB.id, (handlers) =>
  Effect.map(forwardedServices, (served) => handlers.handle(served.messages.endpoint.name, handlerOf(served.messages))))

export const ProviderCHandlers = HttpApiBuilder.group(WorkspaceApi, providerC.id, (handlers) =>
  Effect.map(forwardedServices, (served) => handlers.handle(served.fimCompletions.endpoint.name, handlerOf(served.fimCompletions))))
