import { Context, Effect, Layer } from "effect"
import type { Catalog } from "../../domain/models"
import type { ProviderId } from "../../domain/providerId"
import { catalogFamily, familiesWithModelLimits, familyDefaults, modelDefaults } from "../../domain/rateLimits"
import type { LimitFamily } from "../../domain/workspaceSettings"
import { ModelCatalog } from "../forwarding/ModelCatalog"
import { RateLimiter } from "./RateLimiter"
import { bucketsOf } from "./RateLimits"
import type { Workspace } from "../../domain/workspace"

export interface LimitReading {
  readonly family: LimitFamily
  readonly model: string | null
  readonly requestsPerMinute: number
  readonly tokensPerMinute: number
  /** What the bucket holds now; null when the shared store cannot be asked. */
  readonly remainingRequests: number | null
  readonly remainingTokens: number | null
}

export interface ModelEntry {
  readonly provider: ProviderId
  readonly family: string
  readonly id: string
}

/**
 * The limits in force for a workspace (defaults with its overrides) and what remains of each now,
 * read from the same buckets the requests take from, taking nothing (a demand of zero).
 */
export class WorkspaceLimits extends Context.Tag("WorkspaceLimits")<WorkspaceLimits, {
  readonly readings: (workspace: Workspace) => Effect.Effect<ReadonlyArray<LimitReading>>
}>() {
  static readonly layer = Layer.effect(
    WorkspaceLimits,
    Effect.map(Effect.all([RateLimiter, ModelCatalog]), ([limiter, catalog]) => ({
      readings: (workspace) => {
        const principal = { keyId: "", scopes: [], workspace }
        const overrides = workspace.settings.rateLimits
        const families = Object.keys(familyDefaults) as Array<LimitFamily>
        const modelOf = (family: LimitFamily) =>
          familiesWithModelLimits.has(family)
            ? [...new Set([...Object.keys(modelDefaults), ...Object.keys(overrides.models ?? {})])]
              .filter((model) => catalog.models.some((info) => info.id === model && info.family === catalogFamily(family)))
            : []
        const requests = families.flatMap((family) => [
          { family, model: undefined },
          ...modelOf(family).map((model) => ({ family, model }))
        ])
        return Effect.forEach(requests, ({ family, model }) => {
          const buckets = bucketsOf({ principal, family, model, tokens: 0 })
          // The model's pair comes after the family's in bucketsOf.
          const own = model === undefined ? buckets.slice(0, 2) : buckets.slice(2, 4)
          return limiter.acquire(own.map((bucket) => ({ key: bucket.key, limit: bucket.limit, amount: 0 }))).pipe(
            Effect.map((decision) => decision.buckets.map((reading) => Math.max(0, Math.floor(reading.remaining)))),
            Effect.orElseSucceed(() => [null, null] as const),
            Effect.map(([remainingRequests, remainingTokens]): LimitReading => ({
              family,
              model: model ?? null,
              requestsPerMinute: own[0]!.limit,
              tokensPerMinute: own[1]!.limit,
              remainingRequests: remainingRequests ?? null,
              remainingTokens: remainingTokens ?? null
            }))
          )
        })
      }
    }))
  )
}

/** The models a workspace may use, per provider: its own list where it brings keys, else the gateway's catalog. */
export const workspaceModels = (catalog: Catalog, workspace: Workspace): ReadonlyArray<ModelEntry> =>
  catalog.models.flatMap((info): Array<ModelEntry> => {
    const own = workspace.settings.byokModels[info.provider]
    return own === undefined ? [{ provider: info.provider, family: info.family, id: info.id }] : []
  }).concat(
    (Object.entries(workspace.settings.byokModels) as Array<[ProviderId, ReadonlyArray<string> | undefined]>).flatMap(([provider, models]) =>
      (models ?? []).map((id): ModelEntry => ({
        provider,
        family: catalog.models.find((info) => info.provider === provider && info.id === id)?.family ?? "byok",
        id
      }))
    )
  )
