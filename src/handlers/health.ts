import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WorkspaceApi } from "../api/Api"
import { NotReady } from "../api/healthApi"
import { Dependencies } from "../services/health/Dependencies"
import { Readiness, type Unready } from "../platform/Readiness"

const notReady = ({ reason }: Unready) => new NotReady({ status: "unavailable", reason })

export const HealthHandlers = HttpApiBuilder.group(WorkspaceApi, "health", (handlers) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    const dependencies = yield* Dependencies
    return handlers
      // A process whose own database died is not alive, even in the moment before it exits.
      .handle("healthz", () => readiness.alive.pipe(Effect.mapError(notReady), Effect.as({ status: "ok" as const })))
      // The database first (nothing works without it), then the other dependencies in use, asked together.
      .handle("readyz", () =>
        Effect.all([readiness.ready.pipe(Effect.mapError(notReady)), dependencies.check]).pipe(
          Effect.flatMap(([migration, report]) => {
            const journal = report.journal === undefined ? {} : { journal: report.journal }
            if (report.unready !== undefined) return Effect.fail(new NotReady({ status: "unavailable", reason: report.unready, ...journal }))
            // The database answered (or `ready` would have failed); with nothing in use (stores in memory), no list.
            const states = { ...(readiness.database === undefined ? {} : { [readiness.database]: "up" as const }), ...report.states }
            return Effect.succeed({
              status: "ready" as const,
              migration,
              ...journal,
              ...(Object.keys(states).length === 0 ? {} : { dependencies: states })
            })
          })
        ))
  }))
