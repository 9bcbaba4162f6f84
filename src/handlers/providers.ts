import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { AppConfig } from "../config"
import { providerA } from "../providers/providerA/dialect"
import { providerB } from "../providers/providerB/dialect"
import { providerC } from "../providers/providerC/dialect"
import { forwardedServices, handlerOf } from "./forwarded"

// Each group's handlers, made from the served list (src/handlers/forwarded.ts) the forwarding lane also serves from.

// Raw handlers: the body is read by the same reader as the lane's (src/handlers/forwarded.ts, readForwardedBody).

/** The served list and the body limit every handler reads with. */
const served = Effect.all({ list: forwardedServices, maxBodyBytes: Effect.map(AppConfig, (config) => config.maxBodyBytes) })

export const ProviderAHandlers = HttpApiBuilder.group(WorkspaceApi, providerA.id, (handlers) =>
  Effect.map(served, ({ list, maxBodyBytes }) =>
    handlers
      .handleRaw(list.chatCompletions.endpoint.name, handlerOf(list.chatCompletions, maxBodyBytes))
      .handleRaw(list.embeddings.endpoint.name, handlerOf(list.embeddings, maxBodyBytes))))

export const ProviderBHandlers = HttpApiBuilder.group(WorkspaceApi, providerB.id, (handlers) =>
  Effect.map(served, ({ list, maxBodyBytes }) => handlers.handleRaw(list.messages.endpoint.name, handlerOf(list.messages, maxBodyBytes))))

export const ProviderCHandlers = HttpApiBuilder.group(WorkspaceApi, providerC.id, (handlers) =>
  Effect.map(served, ({ list, maxBodyBytes }) => handlers.handleRaw(list.fimCompletions.endpoint.name, handlerOf(list.fimCompletions, maxBodyBytes))))
