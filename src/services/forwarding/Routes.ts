import { Context, Effect, Either, Layer, Redacted, type Scope } from "effect"
import { AppConfig } from "../../config"
import { attemptOrder } from "../../domain/attemptOrder"
import { type Deployment, type NativeDeployment, type RouteId, routeId, upstreamModelOf } from "../../domain/deployments"
import type { ModelInfo } from "../../domain/models"
import type { ProviderId } from "../../domain/providerId"
import { RegionNotServed } from "../../domain/refusals"
import { providers } from "../../providers/provider"
import { ModelCatalog } from "./ModelCatalog"
import type { ProviderDialect } from "../../providers/providerDialect"

/** Models whose attempts a route of one deployment remembers at most (the models it serves). */
const maxRememberedModels = 1_024

/** One try of a request: the deployment and the model's id there. */
export interface Attempt {
  readonly deployment: Deployment
  readonly upstreamModel: string
}

/** A provider and region, with the deployments that serve it. */
export interface Route {
  readonly id: RouteId
  readonly deployments: ReadonlyArray<Deployment>
  /** Whether a deployment of the route serves the model (with the workspace's own key: a native one). */
  readonly serves: (model: string, ownKey: boolean) => boolean
  /** The merged catalog's entry of a model of the route's provider (the built-in catalog and the routes file's). */
  readonly catalogEntry: (model: string) => ModelInfo | undefined
  /** The deployments to try for a request, in order (priority, weight, cooldowns), at most UPSTREAM_MAX_ATTEMPTS. */
  readonly attempts: (model: string, ownKey: boolean) => ReadonlyArray<Attempt>
}

/** How a deployment fares, as this instance saw it: GET /admin/upstreams. */
export interface DeploymentState {
  readonly route: RouteId
  readonly deployment: string
  readonly kind: Deployment["kind"]
  readonly state: "available" | "cooling"
  readonly coolingUntil: Date | undefined
  readonly lastError: string | undefined
  readonly requests: number
  readonly failures: number
}

/** Counters and cooldown of one deployment (this instance's). */
interface Health {
  requests: number
  failures: number
  coolingUntil: number
  lastError: string | undefined
}

export class Routes extends Context.Tag("Routes")<Routes, {
  /** The route of a provider in a region: the one place a region is checked (the provider's record lists them). */
  readonly route: (provider: ProviderDialect, region: string) => Either.Either<Route, RegionNotServed>
  /**
   * An attempt got an answer it could use (2xx, or a refusal of the request itself); a deployment whose cooldown
   * had ended is available again (a log line says so). Noted when called (a plain update, no step of its own):
   * the effect is the log line, Effect.void when there is nothing to say. `failed` likewise.
   */
  readonly succeeded: (deployment: Deployment) => Effect.Effect<void>
  /** An attempt failed before the first byte: the deployment cools down for `retryAfterSeconds`, else cooldownSeconds. */
  readonly failed: (deployment: Deployment, error: string, retryAfterSeconds: number | undefined) => Effect.Effect<void>
  readonly states: () => ReadonlyArray<DeploymentState>
  /** Every route's deployments. */
  readonly deployments: ReadonlyArray<Deployment>
}>() {
  /**
   * The routes of the configuration; those it names nowhere are answered by the built-in simulator, started on
   * a loopback port for the life of the service, with a warning naming them. `startSimulator` starts it and
   * gives its base URL (the wiring's, src/appLayer.ts: no service imports the simulator).
   */
  static readonly layer = <E>(startSimulator: Effect.Effect<string, E, Scope.Scope>) =>
    Layer.scoped(
      Routes,
      Effect.gen(function*() {
        const config = yield* AppConfig
        const setting = config.routes
        const catalog = yield* ModelCatalog
        const served = providers.flatMap((provider) => provider.regions.map((region) => routeId(provider.id, region)))
        const unset = served.filter((id) => !setting.routes.has(id))
        const simulatorUrl = unset.length === 0 ? undefined : yield* startSimulator
        if (simulatorUrl !== undefined) {
          yield* Effect.logWarning("no upstream configured: the built-in simulator answers instead").pipe(
            Effect.annotateLogs({ routes: unset, simulator: simulatorUrl })
          )
        }
        const deploymentsOf = (id: RouteId): ReadonlyArray<Deployment> =>
          setting.routes.get(id) ?? [simulatedDeployment(id, simulatorUrl ?? "")]
        const health = new Map<string, Health>()
        const healthOf = (deployment: Deployment): Health => {
          const known = health.get(deployment.name)
          if (known !== undefined) return known
          const fresh: Health = { requests: 0, failures: 0, coolingUntil: 0, lastError: undefined }
          health.set(deployment.name, fresh)
          return fresh
        }
        const coolingUntil = (name: string) => health.get(name)?.coolingUntil
        const makeRoute = (provider: ProviderDialect, region: string): Route => {
          const id = routeId(provider.id as ProviderId, region)
          const deployments = deploymentsOf(id)
          const entries = new Map(catalog.models.filter((model) => model.provider === provider.id).map((model) => [model.id, model] as const))
          const ids = new Set(entries.keys())
          const native = deployments.filter((deployment) => deployment.kind === "native")
          const singleAttempts = new Map<string, ReadonlyArray<Attempt>>()
          /** The model's id on a deployment; a workspace's own models go as they are to native deployments without a map. */
          const modelOn = (deployment: Deployment, model: string, ownKey: boolean): string | undefined =>
            ownKey && deployment.models === undefined ? model : upstreamModelOf(deployment, model, ids)
          const candidatesFor = (model: string, ownKey: boolean): ReadonlyArray<Deployment> =>
            (ownKey ? native : deployments).filter((deployment) => modelOn(deployment, model, ownKey) !== undefined)
          return {
            id,
            deployments,
            serves: (model, ownKey) => candidatesFor(model, ownKey).length > 0,
            catalogEntry: (model) => entries.get(model),
            attempts: (model, ownKey) => {
              // A route of one deployment (the common case) always tries it: its attempts are made once per model.
              const fixed = deployments.length === 1 && !ownKey ? singleAttempts.get(model) : undefined
              if (fixed !== undefined) return fixed
              const made = attemptOrder(candidatesFor(model, ownKey), coolingUntil, Date.now(), config.upstreamMaxAttempts).map((deployment) => ({
                deployment,
                upstreamModel: modelOn(deployment, model, ownKey) ?? model
              }))
              if (deployments.length === 1 && !ownKey && made.length > 0 && singleAttempts.size < maxRememberedModels) singleAttempts.set(model, made)
              return made
            }
          }
        }
        // Found by provider, then region, each answer made once: no key built and no Either made a request.
        const routes = new Map<string, Map<string, Either.Either<Route, RegionNotServed>>>()
        const allDeployments: Array<Deployment> = []
        for (const provider of providers) {
          const byRegion = new Map<string, Either.Either<Route, RegionNotServed>>()
          for (const region of provider.regions) {
            const route = makeRoute(provider, region)
            allDeployments.push(...route.deployments)
            byRegion.set(region, Either.right(route))
          }
          routes.set(provider.id, byRegion)
        }
        return {
          route: (provider, region) => routes.get(provider.id)?.get(region) ?? Either.left(new RegionNotServed({ region })),
          succeeded: (deployment) => {
            const state = healthOf(deployment)
            state.requests += 1
            // Only once its cooldown has ended: an answer to a request sent before it cooled says nothing new.
            if (state.coolingUntil === 0 || state.coolingUntil > Date.now()) return Effect.void
            state.coolingUntil = 0
            return Effect.logInfo("upstream deployment available again").pipe(
              Effect.annotateLogs({ route: deployment.route, deployment: deployment.name })
            )
          },
          failed: (deployment, error, retryAfterSeconds) => {
            const state = healthOf(deployment)
            state.requests += 1
            state.failures += 1
            state.lastError = error
            const seconds = retryAfterSeconds ?? setting.cooldownSeconds
            state.coolingUntil = Date.now() + seconds * 1_000
            return Effect.logWarning("upstream deployment cooled down").pipe(
              Effect.annotateLogs({ route: deployment.route, deployment: deployment.name, error, seconds })
            )
          },
          states: () =>
            allDeployments.map((deployment) => {
              const state = health.get(deployment.name)
              const cooling = state !== undefined && state.coolingUntil > Date.now()
              return {
                route: deployment.route,
                deployment: deployment.name,
                kind: deployment.kind,
                state: cooling ? "cooling" : "available",
                coolingUntil: cooling ? new Date(state.coolingUntil) : undefined,
                lastError: state?.lastError,
                requests: state?.requests ?? 0,
                failures: state?.failures ?? 0
              }
            }),
          deployments: allDeployments
        }
      })
    )
}

/** The simulator standing in for a route named nowhere. */
const simulatedDeployment = (id: RouteId, url: string): NativeDeployment => {
  const [provider, region] = id.split("/") as [ProviderId, string]
  return {
    kind: "native",
    name: `simulator-${provider}-${region}`,
    route: id,
    provider,
    region,
    priority: 0,
    weight: 1,
    models: undefined,
    url,
    simulated: true,
    apiKey: Redacted.make("simulator")
  }
}
