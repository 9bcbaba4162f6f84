// Counts attempts per fault key, so that "fail the first N attempts, then succeed" can exercise retries.
import { Context, Effect, HashMap, Layer, Option, Ref } from "effect"

export interface FaultLedgerShape {
  /** Records one attempt under `key`; true while the attempt number is within `times` (undefined: always). */
  readonly attemptFails: (key: string, times: number | undefined) => Effect.Effect<boolean>
}

export class FaultLedger extends Context.Tag("simulator/FaultLedger")<FaultLedger, FaultLedgerShape>() {
  static readonly layer: Layer.Layer<FaultLedger> = Layer.effect(
    FaultLedger,
    Effect.map(Ref.make(HashMap.empty<string, number>()), (attempts) =>
      FaultLedger.of({
        attemptFails: (key, times) =>
          times === undefined
            ? Effect.succeed(true)
            : Ref.modify(attempts, (counts) => {
                const attempt = Option.getOrElse(HashMap.get(counts, key), () => 0) + 1
                return [attempt <= times, HashMap.set(counts, key, attempt)] as const
              })
      })
    )
  )
}
