// A simulator on a free loopback port for tests, with the instant tokenizer unless told otherwise.
import { Effect, Layer } from "effect"
import { SimulatorServerLive } from "../../src/simulator/server"
import { SimulatorSettings, type SimulatorSettingsShape } from "../../src/simulator/settings"
import { SimulatorTokenizer } from "../../src/simulator/tokenizer"

export const simulatorTestLayer = (settings: Partial<SimulatorSettingsShape> = {}) =>
  SimulatorServerLive({ port: 0 }).pipe(
    Layer.provide(SimulatorSettings.layer(settings)),
    Layer.provide(SimulatorTokenizer.approximate)
  )

/** Every item of an async iterable (Node 20 has no Array.fromAsync); a failure of the iterable fails the effect. */
export const collectAsync = <A>(iterable: AsyncIterable<A>) =>
  Effect.tryPromise({
    try: async () => {
      const items: Array<A> = []
      for await (const item of iterable) items.push(item)
      return items
    },
    catch: (error) => error
  })

/** The rejection of a call expected to fail. */
export const failureOf = <A>(call: () => Promise<A>) => Effect.flip(Effect.tryPromise({ try: call, catch: (error) => error }))
