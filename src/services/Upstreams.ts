import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig, upstreamIds, type UpstreamId } from "../config"
import { SimulatorAddress, SimulatorServerLive } from "../simulator/server"
import { SimulatorSettings } from "../simulator/settings"
import { SimulatorTokenizer } from "../simulator/tokenizer"

export type Provider = "provider_a" | "provider_b" | "provider_c"

/** Where one provider and region is served: the provider's API root and the credentials the service uses there. */
export interface UpstreamTarget {
  readonly id: UpstreamId
  /** e.g. https://api.example.com or http://127.0.0.1:41234; paths such as /v1/messages are appended. */
  readonly url: string
  readonly key: Redacted.Redacted
  /** True when no upstream is configured and the built-in simulator answers. */
  readonly simulated: boolean
}

/** The regions each provider serves; any other region is "not found" for it. */
export const regionsOf: Readonly<Record<Provider, ReadonlyArray<string>>> = {
  provider_a: ["eu", "us"],
  provider_b: ["eu", "us"],
  provider_c: ["eu"]
}

export class Upstreams extends Context.Tag("Upstreams")<Upstreams, {
  /** The target of a provider in a region; None when the provider does not serve that region. */
  readonly resolve: (provider: Provider, region: string) => Option.Option<UpstreamTarget>
}>() {
  /**
   * The configured upstreams. Those left unset are answered by the built-in simulator, started on a
   * loopback port for the life of the service, with a warning naming them.
   */
  static readonly layer = Layer.scoped(
    Upstreams,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const unset = upstreamIds.filter((id) => Option.isNone(config.upstreams[id]))
      const simulatorUrl = unset.length === 0
        ? Option.none<string>()
        : Option.some(
          yield* Layer.build(
            SimulatorServerLive().pipe(
              Layer.provide([SimulatorSettings.layer(), SimulatorTokenizer.approximate])
            )
          ).pipe(Effect.map((context) => Context.get(context, SimulatorAddress).baseUrl))
        )
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
        resolve: (provider, region) =>
          regionsOf[provider].includes(region) ? Option.fromNullable(targets.get(`${provider}_${region}`)) : Option.none()
      }
    })
  )
}
