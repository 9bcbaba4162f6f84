import { Context, Effect, Either, Layer, Option, Redacted, type Scope } from "effect"
import { AppConfig, upstreamIds, type UpstreamId } from "../../config"
import { RegionNotServed } from "../../domain/refusals"
import type { ProviderDialect } from "../../providers/providerDialect"

/** Where one provider and region is served: the provider's API root and the credentials the service uses there. */
export interface UpstreamTarget {
  readonly id: UpstreamId
  /** e.g. https://api.example.com or http://127.0.0.1:41234; paths such as /v1/messages are appended. */
  readonly url: string
  readonly key: Redacted.Redacted
  /** True when no upstream is configured and the built-in simulator answers. */
  readonly simulated: boolean
}

export class Upstreams extends Context.Tag("Upstreams")<Upstreams, {
  /** The target of a provider in a region: the one place a region is checked (the provider's record lists them). */
  readonly resolve: (provider: ProviderDialect, region: string) => Either.Either<UpstreamTarget, RegionNotServed>
}>() {
  /**
   * The configured upstreams. Those left unset are answered by the built-in simulator, started on a
   * loopback port for the life of the service, with a warning naming them. `startSimulator` starts it and
   * gives its base URL (the wiring's, src/appLayer.ts: no service imports the simulator).
   */
  static readonly layer = <E>(startSimulator: Effect.Effect<string, E, Scope.Scope>) =>
    Layer.scoped(
      Upstreams,
      Effect.gen(function*() {
        const config = yield* AppConfig
        const unset = upstreamIds.filter((id) => Option.isNone(config.upstreams[id]))
        const simulatorUrl = unset.length === 0 ? Option.none<string>() : Option.some(yield* startSimulator)
        if (Option.isSome(simulatorUrl)) {
          yield* Effect.logWarning("no upstream configured: the built-in simulator answers instead").pipe(
            Effect.annotateLogs({ upstreams: unset.map((id) => `UPSTREAM_${id.toUpperCase()}_URL`), simulator: simulatorUrl.value })
          )
        }
        const targets = new Map<string, UpstreamTarget>(
          upstreamIds.map((id) => {
            const configured = config.upstreams[id]
            const target: UpstreamTarget = Option.isSome(configured)
              ? { id, url: configured.value.url, key: configured.value.key, simulated: false }
              : { id, url: Option.getOrElse(simulatorUrl, () => ""), key: Redacted.make("simulator"), simulated: true }
            return [id, target] as const
          })
        )
        return {
          resolve: (provider, region) => {
            const target = provider.regions.includes(region) ? targets.get(`${provider.id}_${region}`) : undefined
            return target === undefined ? Either.left(new RegionNotServed({ region })) : Either.right(target)
          }
        }
      })
    )
}
