// Runs the upstream simulator alone: `npm run simulator` (built into dist/server/simulator.js).
// SIMULATOR_PORT (8090), SIMULATOR_HOST (127.0.0.1), SIMULATOR_TOKENIZER (exact | approximate), and settings.ts.
import { NodeRuntime } from "@effect/platform-node"
import { Config, Context, Effect, Layer } from "effect"
import { SimulatorAddress, SimulatorServerLive } from "./server"
import { SimulatorSettings } from "./settings"
import { SimulatorTokenizer } from "./tokenizer"

const simulator = Effect.gen(function* () {
  const port = yield* Config.integer("SIMULATOR_PORT").pipe(Config.withDefault(8090))
  const host = yield* Config.string("SIMULATOR_HOST").pipe(Config.withDefault("127.0.0.1"))
  const tokenizer = yield* Config.literal("exact", "approximate")("SIMULATOR_TOKENIZER").pipe(Config.withDefault("exact"))
  return SimulatorServerLive({ port, host }).pipe(
    Layer.tap((context) => Effect.logInfo(`Upstream simulator listening on ${Context.get(context, SimulatorAddress).baseUrl}`)),
    Layer.provide(SimulatorSettings.fromEnv),
    Layer.provide(tokenizer === "exact" ? SimulatorTokenizer.exact : SimulatorTokenizer.approximate)
  )
})

NodeRuntime.runMain(Layer.launch(Layer.unwrapEffect(simulator)))
