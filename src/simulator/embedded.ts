// The built-in simulator as the service starts it for the upstreams left unset. A module of its own, imported on
// demand by src/appLayer.ts: a service whose upstreams are all configured never loads the simulator's code.
import { Context, Effect, Layer } from "effect"
import { SimulatorAddress, SimulatorServerLive } from "./server"
import { SimulatorSettings } from "./settings"
import { SimulatorTokenizer } from "./tokenizer"

/** Starts the simulator on a loopback port for the life of the scope: its base URL. */
export const startEmbeddedSimulator = Layer.build(
  SimulatorServerLive().pipe(Layer.provide([SimulatorSettings.layer(), SimulatorTokenizer.approximate]))
).pipe(Effect.map((context) => Context.get(context, SimulatorAddress).baseUrl))
