// Server-wide defaults of the simulator; single requests may override most of them (see controls.ts).
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"

export interface SimulatorSettingsShape {
  /** Delay before the response headers. */
  readonly latencyMs: number
  /** Delay between two stream events. */
  readonly chunkDelayMs: number
  /** Tokens of generated text per stream chunk. */
  readonly chunkTokens: number
  /** Retry hint sent with 429 and overload answers. */
  readonly retryAfterMs: number
  /** When set, requests must carry this key (Bearer or x-api-key); when unset any key, or none, is accepted. */
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  /** Further keys accepted besides apiKey (customer-supplied keys of workspaces, in tests): any of them will do. */
  readonly acceptedKeys: ReadonlyArray<Redacted.Redacted<string>>
  /** The AWS credentials the simulated Bedrock checks SigV4 signatures against. */
  readonly aws: { readonly accessKeyId: string; readonly secretAccessKey: Redacted.Redacted<string> }
}

export const defaultSimulatorSettings: SimulatorSettingsShape = {
  latencyMs: 0,
  chunkDelayMs: 0,
  chunkTokens: 1,
  retryAfterMs: 1000,
  apiKey: Option.none(),
  acceptedKeys: [],
  aws: { accessKeyId: "AKIASIMULATOR0000001", secretAccessKey: Redacted.make("simulator-aws-secret-access-key") }
}

export class SimulatorSettings extends Context.Tag("simulator/SimulatorSettings")<
  SimulatorSettings,
  SimulatorSettingsShape
>() {
  static readonly layer = (overrides: Partial<SimulatorSettingsShape> = {}): Layer.Layer<SimulatorSettings> =>
    Layer.succeed(SimulatorSettings, { ...defaultSimulatorSettings, ...overrides })

  /**
   * SIMULATOR_LATENCY_MS, SIMULATOR_CHUNK_DELAY_MS, SIMULATOR_CHUNK_TOKENS, SIMULATOR_RETRY_AFTER_MS, SIMULATOR_API_KEY,
   * SIMULATOR_ACCEPTED_KEYS (comma-separated), SIMULATOR_AWS_ACCESS_KEY_ID, SIMULATOR_AWS_SECRET_ACCESS_KEY.
   */
  static readonly fromEnv = Layer.effect(
    SimulatorSettings,
    Effect.gen(function* () {
      const nonNegative = (name: string, fallback: number) =>
        Config.integer(name).pipe(
          Config.validate({ message: `${name} must be >= 0`, validation: (n) => n >= 0 }),
          Config.withDefault(fallback)
        )
      return {
        latencyMs: yield* nonNegative("SIMULATOR_LATENCY_MS", defaultSimulatorSettings.latencyMs),
        chunkDelayMs: yield* nonNegative("SIMULATOR_CHUNK_DELAY_MS", defaultSimulatorSettings.chunkDelayMs),
        chunkTokens: yield* Config.integer("SIMULATOR_CHUNK_TOKENS").pipe(
          Config.validate({ message: "SIMULATOR_CHUNK_TOKENS must be >= 1", validation: (n) => n >= 1 }),
          Config.withDefault(defaultSimulatorSettings.chunkTokens)
        ),
        retryAfterMs: yield* nonNegative("SIMULATOR_RETRY_AFTER_MS", defaultSimulatorSettings.retryAfterMs),
        apiKey: yield* Config.option(Config.redacted("SIMULATOR_API_KEY")),
        acceptedKeys: yield* Config.string("SIMULATOR_ACCEPTED_KEYS").pipe(
          Config.withDefault(""),
          Config.map((list) => list.split(",").map((key) => key.trim()).filter((key) => key !== "").map((key) => Redacted.make(key)))
        ),
        aws: {
          accessKeyId: yield* Config.string("SIMULATOR_AWS_ACCESS_KEY_ID").pipe(Config.withDefault(defaultSimulatorSettings.aws.accessKeyId)),
          secretAccessKey: yield* Config.redacted("SIMULATOR_AWS_SECRET_ACCESS_KEY").pipe(
            Config.withDefault(defaultSimulatorSettings.aws.secretAccessKey)
          )
        }
      }
    })
  )
}
