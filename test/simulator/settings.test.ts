import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import { defaultSimulatorSettings, SimulatorSettings } from "../../src/simulator/settings"

const fromEnv = (env: Record<string, string>) =>
  Effect.provide(SimulatorSettings, SimulatorSettings.fromEnv.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))))

describe("SimulatorSettings.fromEnv", () => {
  it.effect("falls back to the defaults", () =>
    Effect.gen(function* () {
      expect(yield* fromEnv({})).toEqual(defaultSimulatorSettings)
    })
  )

  it.effect("reads every variable", () =>
    Effect.gen(function* () {
      const settings = yield* fromEnv({
        SIMULATOR_LATENCY_MS: "25",
        SIMULATOR_CHUNK_DELAY_MS: "5",
        SIMULATOR_CHUNK_TOKENS: "4",
        SIMULATOR_RETRY_AFTER_MS: "300",
        SIMULATOR_API_KEY: "secret"
      })
      expect(settings).toMatchObject({ latencyMs: 25, chunkDelayMs: 5, chunkTokens: 4, retryAfterMs: 300 })
      expect(Option.map(settings.apiKey, Redacted.value)).toEqual(Option.some("secret"))
    })
  )

  it.effect("refuses nonsense", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(fromEnv({ SIMULATOR_CHUNK_TOKENS: "0" }))
      expect(String(failure)).toMatch(/SIMULATOR_CHUNK_TOKENS/)
    })
  )
})
