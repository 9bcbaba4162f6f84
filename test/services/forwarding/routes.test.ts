import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Logger, Redacted } from "effect"
import { AppConfig } from "../../../src/config"
import type { NativeDeployment, RoutesSetting } from "../../../src/domain/deployments"
import { providers } from "../../../src/providers/provider"
import { MODEL_CATALOG } from "../../../src/domain/models"
import { ModelCatalog } from "../../../src/services/forwarding/ModelCatalog"
import { Routes } from "../../../src/services/forwarding/Routes"

/**
 * Routes' bookkeeping of one route with two deployments: cooldowns as GET /admin/upstreams shows them, and the
 * log lines an operator reads when a deployment is cooled down and when it comes back.
 */

const deployment = (name: string, priority: number): NativeDeployment => ({
  kind: "native",
  name,
  route: "provider_a/eu",
  provider: "provider_a",
  region: "eu",
  priority,
  weight: 1,
  models: undefined,
  url: "http://127.0.0.1:9",
  simulated: false,
  apiKey: Redacted.make("upstream-key")
})

const main = deployment("main-eu", 0)
const backup = deployment("backup-eu", 1)

const setting: RoutesSetting = {
  cooldownSeconds: 30,
  routes: new Map([["provider_a/eu", [main, backup]]]),
  catalog: { mode: "extend", models: [] }
}

interface Line {
  readonly message: string
  readonly annotations: Record<string, unknown>
}

const routesWith = (lines: Array<Line>) =>
  Routes.layer(Effect.succeed("http://127.0.0.1:9")).pipe(
    Layer.provide(ModelCatalog.fixed(MODEL_CATALOG)),
    Layer.provide(
      AppConfig.layerWith({ routes: setting, upstreamMaxAttempts: 3 }).pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
      )
    ),
    Layer.provideMerge(Logger.replace(
      Logger.defaultLogger,
      // The deployments' lines only (not the start's warning about the routes the simulator answers).
      Logger.make(({ annotations, message }) =>
        String(message).startsWith("upstream deployment") &&
        void lines.push({
          message: String(message),
          annotations: Object.fromEntries([...annotations].map(([key, value]) => [key, value]))
        }))
    ))
  )

const stateOf = (routes: Routes["Type"], name: string) => routes.states().find((state) => state.deployment === name)!
const attemptNames = (routes: Routes["Type"]) =>
  Either.getOrThrow(routes.route(providers.find((p) => p.id === "provider_a")!, "eu")).attempts("chatgen-4o-mini", false).map((a) => a.deployment.name)

describe("Routes", () => {
  it.effect("cools a failed deployment for its retry-after, skips it meanwhile, and logs both changes once", () => {
    const lines: Array<Line> = []
    return Effect.gen(function*() {
      const routes = yield* Routes
      expect(attemptNames(routes)).toEqual(["main-eu", "backup-eu"])
      const before = Date.now()
      yield* routes.failed(main, "answered 429", 20)
      expect(stateOf(routes, "main-eu")).toMatchObject({ state: "cooling", failures: 1, requests: 1, lastError: "answered 429" })
      const until = stateOf(routes, "main-eu").coolingUntil!.getTime()
      expect(until).toBeGreaterThanOrEqual(before + 20_000)
      expect(until).toBeLessThan(Date.now() + 20_001)
      expect(attemptNames(routes)).toEqual(["backup-eu"])
      expect(lines).toEqual([{
        message: "upstream deployment cooled down",
        annotations: { route: "provider_a/eu", deployment: "main-eu", error: "answered 429", seconds: 20 }
      }])

      // An answer to a request sent before the cooldown (still running) changes nothing and says nothing.
      yield* routes.succeeded(main)
      expect(stateOf(routes, "main-eu").state).toBe("cooling")
      expect(lines).toHaveLength(1)
    }).pipe(Effect.provide(routesWith(lines)))
  })

  it.effect("says when a deployment whose cooldown ended answers again, once", () => {
    const lines: Array<Line> = []
    return Effect.gen(function*() {
      const routes = yield* Routes
      // A cooldown of no time: ended as soon as it began.
      yield* routes.failed(main, "unreachable: ECONNREFUSED", 0)
      yield* routes.succeeded(backup)
      expect(lines.map((line) => line.message)).toEqual(["upstream deployment cooled down"])
      yield* routes.succeeded(main)
      yield* routes.succeeded(main)
      expect(lines.slice(1)).toEqual([{
        message: "upstream deployment available again",
        annotations: { route: "provider_a/eu", deployment: "main-eu" }
      }])
      expect(stateOf(routes, "main-eu")).toMatchObject({ state: "available", requests: 3, failures: 1 })
      expect(attemptNames(routes)).toEqual(["main-eu", "backup-eu"])
    }).pipe(Effect.provide(routesWith(lines)))
  })

  it.effect("uses cooldownSeconds when the deployment gave no retry-after", () =>
    Effect.gen(function*() {
      const routes = yield* Routes
      const before = Date.now()
      yield* routes.failed(backup, "answered 503", undefined)
      const until = stateOf(routes, "backup-eu").coolingUntil!.getTime()
      expect(until).toBeGreaterThanOrEqual(before + 30_000)
      expect(until).toBeLessThan(Date.now() + 30_001)
    }).pipe(Effect.provide(routesWith([]))))
})
