import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FaultLedger } from "../../src/simulator/faultLedger"

describe("FaultLedger", () => {
  it.effect("fails the first `times` attempts of a key, then lets it through", () =>
    Effect.gen(function* () {
      const ledger = yield* FaultLedger
      const attempts = yield* Effect.forEach([1, 2, 3, 4], () => ledger.attemptFails("a", 2))
      expect(attempts).toEqual([true, true, false, false])
      expect(yield* ledger.attemptFails("b", 1)).toBe(true)
    }).pipe(Effect.provide(FaultLedger.layer))
  )

  it.effect("always fails without a count", () =>
    Effect.gen(function* () {
      const ledger = yield* FaultLedger
      expect(yield* Effect.forEach([1, 2, 3], () => ledger.attemptFails("a", undefined))).toEqual([true, true, true])
    }).pipe(Effect.provide(FaultLedger.layer))
  )
})
