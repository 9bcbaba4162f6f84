import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { AppConfig } from "../config"
import { providerA } from "../providers/providerA/dialect"
import { providerB } from "../providers/providerB/dialect"
import { providerC } from "../providers/providerC/dialect"
import * as ProviderAModels from "../providers/providerA/modelsWire"
import * as ProviderBModels from "../providers/providerB/modelsWire"
import * as ProviderCModels from "../providers/providerC/modelsWire"
import { forwardedServices, handlerOf } from "./forwarded"
import { listModelsOf, pageModelsOf, retrieveModelOf } from "./models"

// Each group's handlers, made from the served list (src/handlers/forwarded.ts) the forwarding lane also serves from.

// Raw handlers: the body is read by the same reader as the lane's (src/handlers/forwarded.ts, readForwardedBody).
// The models lists are served here, not forwarded (src/handlers/models.ts).

/** The served list, the body limit every handler reads with, and BASE_PATH (named by a refusal of an unknown model). */
const served = Effect.all({ list: forwardedServices, config: AppConfig })

export const ProviderAHandlers = HttpApiBuilder.group(WorkspaceApi, providerA.id, (handlers) =>
  Effect.map(served, ({ config: { basePath, maxBodyBytes }, list }) =>
    handlers
      .handleRaw(list.chatCompletions.endpoint.name, handlerOf(list.chatCompletions, maxBodyBytes))
      .handleRaw(list.embeddings.endpoint.name, handlerOf(list.embeddings, maxBodyBytes))
      .handleRaw(list.responses.endpoint.name, handlerOf(list.responses, maxBodyBytes))
      .handle("listModels", listModelsOf(providerA, ProviderAModels.modelListOf))
      .handle("retrieveModel", retrieveModelOf(providerA, basePath, ProviderAModels.modelOf))))

export const ProviderBHandlers = HttpApiBuilder.group(WorkspaceApi, providerB.id, (handlers) =>
  Effect.map(served, ({ config: { basePath, maxBodyBytes }, list }) =>
    handlers
      .handleRaw(list.messages.endpoint.name, handlerOf(list.messages, maxBodyBytes))
      .handleRaw(list.countTokens.endpoint.name, handlerOf(list.countTokens, maxBodyBytes))
      .handle("listModels", pageModelsOf(providerB, ProviderBModels.modelPageOf))
      .handle("retrieveModel", retrieveModelOf(providerB, basePath, ProviderBModels.modelInfoOf))))

export const ProviderCHandlers = HttpApiBuilder.group(WorkspaceApi, providerC.id, (handlers) =>
  Effect.map(served, ({ config: { basePath, maxBodyBytes }, list }) =>
    handlers
      .handleRaw(list.fimCompletions.endpoint.name, handlerOf(list.fimCompletions, maxBodyBytes))
      .handle("listModels", listModelsOf(providerC, ProviderCModels.modelListOf))
      .handle("retrieveModel", retrieveModelOf(providerC, basePath, ProviderCModels.modelCardOf))))
