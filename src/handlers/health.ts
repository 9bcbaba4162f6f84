import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { NotReady } from "../api/healthApi"
import { Readiness, type Unready } from "../services/Readiness"

const notReady = ({ reason }: Unready) => new NotReady({ status: "unavailable", reason })

export const HealthHandlers = HttpApiBuilder.group(WorkspaceApi, "health", (handlers) =>
  Effect.map(Readiness, (readiness) =>
    handlers
      // A process whose own database died is not alive, even in the moment before it exits.
      .handle("healthz", () => readiness.alive.pipe(Effect.mapError(notReady), Effect.as({ status: "ok" as const })))
      .handle("readyz", () =>
        readiness.ready.pipe(Effect.mapError(notReady), Effect.map((migration) => ({ status: "ready" as const, migration }))))))
