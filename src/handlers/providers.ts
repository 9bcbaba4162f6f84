import { HttpApiBuilder } from "@effect/platform"
import { WorkspaceApi } from "../api/Api"
import { notImplemented } from "./notYet"

export const ProviderAHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_a", (handlers) =>
  handlers
    .handle("chatCompletions", () => notImplemented("provider_a", "Chat completions"))
    .handle("embeddings", () => notImplemented("provider_a", "Embeddings")))

export const ProviderBHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_b", (handlers) =>
  handlers.handle("messages", () => notImplemented("provider_b", "Messages")))

export const ProviderCHandlers = HttpApiBuilder.group(WorkspaceApi, "provider_c", (handlers) =>
  handlers.handle("fimCompletions", () => notImplemented("provider_c", "FIM completion")))
