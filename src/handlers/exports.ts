import { HttpApiBuilder } from "@effect/platform"
import { WorkspaceApi } from "../api/Api"
import { notImplemented } from "./notYet"

export const ExportsHandlers = HttpApiBuilder.group(WorkspaceApi, "exports", (handlers) =>
  handlers
    .handle("users", () => notImplemented("export", "The users export"))
    .handle("assistants", () => notImplemented("export", "The assistants export"))
    .handle("workflows", () => notImplemented("export", "The workflows export"))
    .handle("projects", () => notImplemented("export", "The projects export"))
    .handle("models", () => notImplemented("export", "The models export")))
