import { Context, Data, Effect, Either, Layer, Redacted } from "effect"
import type { NativeDeployment } from "../../domain/deployments"
import { AppConfig } from "../../config"
import type { ProviderId } from "../../domain/providerId"
import { providers } from "../../providers/provider"
import { UpstreamClient } from "../forwarding/UpstreamClient"
import { Routes } from "../forwarding/Routes"

/** The provider refused the key when it was checked: it is not saved. */
export class ProviderKeyRejected extends Data.TaggedError("ProviderKeyRejected")<{
  readonly provider: string
  /** In the service's own words: the upstream's status, never its text. */
  readonly reason: string
}> {}

/**
 * No route of the provider has a native deployment: a workspace's own key is sent to native deployments only, so
 * it could never be used (DESIGN "Upstreams: routes and deployments"). Not saved; the operator's routes file decides.
 */
export class ProviderKeyUnroutable extends Data.TaggedError("ProviderKeyUnroutable")<{
  readonly provider: string
}> {}

/** The provider could not be asked (down, timing out): the key is not saved, and may be tried again. */
export class ProviderKeyUncheckable extends Data.TaggedError("ProviderKeyUncheckable")<{
  readonly provider: string
  readonly reason: string
}> {}

/**
 * One cheap upstream call with a candidate key, before it is saved. Its real implementation lives on the
 * forwarding side (each provider knows its cheapest authenticated call); tests give their own.
 */
/** The most of the check's answer read (and dropped). */
const answerBytes = 256 * 1024

export class ProviderKeyCheck extends Context.Tag("ProviderKeyCheck")<ProviderKeyCheck, {
  readonly check: (
    provider: string,
    apiKey: string
  ) => Effect.Effect<void, ProviderKeyRejected | ProviderKeyUnroutable | ProviderKeyUncheckable>
}>() {
  /**
   * The provider's cheapest authenticated call (its dialect's keyCheck) at the first native deployment of its routes,
   * with the candidate key: a workspace's own key only ever goes to native deployments, so a provider with none
   * cannot take one.
   */
  static readonly layer = Layer.effect(
    ProviderKeyCheck,
    Effect.gen(function*() {
      const client = yield* UpstreamClient
      const routes = yield* Routes
      const config = yield* AppConfig
      return {
        check: (providerId, apiKey) =>
          Effect.gen(function*() {
            const provider = providers.find((candidate) => candidate.id === (providerId as ProviderId))
            if (provider === undefined) {
              return yield* Effect.fail(new ProviderKeyRejected({ provider: providerId, reason: "not a provider of this service" }))
            }
            const native = provider.regions
              .flatMap((region) => Either.match(routes.route(provider, region), { onLeft: () => [], onRight: (route) => route.deployments }))
              .find((deployment): deployment is NativeDeployment => deployment.kind === "native")
            if (native === undefined) {
              return yield* Effect.fail(new ProviderKeyUnroutable({ provider: providerId }))
            }
            const response = yield* client.send({
              url: `${native.url}${provider.keyCheck.path}`,
              method: "GET",
              headers: { ...provider.keyCheck.headers(config), ...provider.upstreamAuth(Redacted.make(apiKey)) },
              body: undefined
            }).pipe(
              Effect.mapError((failure) => new ProviderKeyUncheckable({ provider: providerId, reason: failure.kind })),
              // Only the status is used: the answer (a model list, or an error that may name the key) is read and dropped.
              Effect.tap((answer) => Effect.ignore(client.readAnswer(answer.body, answerBytes)))
            )
            if (response.status === 401 || response.status === 403) {
              return yield* Effect.fail(new ProviderKeyRejected({ provider: providerId, reason: `the provider answered ${response.status}` }))
            }
            if (response.status >= 300) {
              return yield* Effect.fail(new ProviderKeyUncheckable({ provider: providerId, reason: `the provider answered ${response.status}` }))
            }
          })
      }
    })
  )
}

