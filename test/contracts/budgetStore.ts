import { expect, type Vitest } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { BudgetStore, type BudgetLine } from "../../src/services/limits/BudgetStore"
import { eventually } from "../support/fakeUpstream"

/** A budget of its own for each case (the backings keep budgets between cases), in a period of a day. */
const freshLine = (limitNano: number, periodStart = Date.UTC(2026, 10, 28)): BudgetLine => ({
  key: `{${crypto.randomUUID()}}:workspace`,
  periodStart,
  periodEnd: periodStart + 86_400_000,
  limitNano
})

const hour = 3_600_000

/**
 * The behaviour every backing of BudgetStore (memory, PostgreSQL, Redis) must show. Run on the real clock:
 * PostgreSQL and Redis keep their own time for reservations' lapse.
 */
export const budgetStoreContract = <ExcludeTestServices extends boolean>(it: Vitest.MethodsNonLive<BudgetStore, ExcludeTestServices>) => {
  it.effect("holds no more than the amount from a concurrent burst: 30 reservations of a quarter, 4 fit", () =>
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const line = freshLine(1_000)
      const decisions = yield* Effect.all(
        Array.from({ length: 30 }, () => store.reserve(crypto.randomUUID(), [line], 250, hour)),
        { concurrency: "unbounded" }
      )
      expect(decisions.filter((d) => d.allowed)).toHaveLength(4)
      expect(decisions.find((d) => !d.allowed)).toEqual({ allowed: false, refusedLine: 0 })
      expect(yield* store.usage([line])).toEqual([{ spentNano: 0, reservedNano: 1_000 }])
    }))

  it.effect("reserves on every line or on none, and names the line that refused", () =>
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const [roomy, tight] = [freshLine(1_000), freshLine(100)]
      expect(yield* store.reserve(crypto.randomUUID(), [roomy, tight], 200, hour)).toEqual({ allowed: false, refusedLine: 1 })
      expect(yield* store.usage([roomy, tight])).toEqual([{ spentNano: 0, reservedNano: 0 }, { spentNano: 0, reservedNano: 0 }])
      expect((yield* store.reserve(crypto.randomUUID(), [roomy, tight], 100, hour)).allowed).toBe(true)
      expect(yield* store.usage([roomy, tight])).toEqual([{ spentNano: 0, reservedNano: 100 }, { spentNano: 0, reservedNano: 100 }])
    }))

  it.effect("settles a reservation to the real cost: the rest is free again, and says the spend before and after", () =>
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const line = freshLine(1_000)
      const id = crypto.randomUUID()
      expect((yield* store.reserve(id, [line], 800, hour)).allowed).toBe(true)
      expect((yield* store.reserve(crypto.randomUUID(), [line], 300, hour)).allowed).toBe(false)
      expect(yield* store.settle(id, [line], 150)).toEqual([{ beforeNano: 0, afterNano: 150 }])
      expect(yield* store.usage([line])).toEqual([{ spentNano: 150, reservedNano: 0 }])
      // Spent and held together never pass the amount: 150 + 850 fits, one more nano-dollar does not.
      expect((yield* store.reserve(crypto.randomUUID(), [line], 851, hour)).allowed).toBe(false)
      expect((yield* store.reserve(crypto.randomUUID(), [line], 850, hour)).allowed).toBe(true)
    }))

  it.effect("keeps each period apart: a new period starts from nothing", () =>
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const today = freshLine(1_000)
      const tomorrow = { ...today, periodStart: today.periodEnd, periodEnd: today.periodEnd + 86_400_000 }
      const id = crypto.randomUUID()
      expect((yield* store.reserve(id, [today], 1_000, hour)).allowed).toBe(true)
      yield* store.settle(id, [today], 1_000)
      expect((yield* store.reserve(crypto.randomUUID(), [today], 1, hour)).allowed).toBe(false)
      expect((yield* store.reserve(crypto.randomUUID(), [tomorrow], 1_000, hour)).allowed).toBe(true)
    }))

  it.effect("lets a reservation never settled (its instance crashed) lapse after its time", () =>
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const line = freshLine(1_000)
      expect((yield* store.reserve(crypto.randomUUID(), [line], 1_000, 300)).allowed).toBe(true)
      expect((yield* store.reserve(crypto.randomUUID(), [line], 1, hour)).allowed).toBe(false)
      // Awaited, not slept: the store's own clock decides when the reservation lapsed.
      yield* Effect.promise(() =>
        eventually(() => Effect.runPromise(Effect.map(store.usage([line]), ([usage]) => usage!.reservedNano)), (held) => held === 0, 5_000)
      )
      expect((yield* store.reserve(crypto.randomUUID(), [line], 1_000, hour)).allowed).toBe(true)
    }))

  it.effect("adds the cost of a reservation that lapsed before it settled: the money was spent", () =>
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const line = freshLine(1_000)
      const id = crypto.randomUUID()
      expect((yield* store.reserve(id, [line], 500, 200)).allowed).toBe(true)
      yield* Effect.promise(() =>
        eventually(() => Effect.runPromise(Effect.map(store.usage([line]), ([usage]) => usage!.reservedNano)), (held) => held === 0, 5_000)
      )
      expect(yield* store.settle(id, [line], 400)).toEqual([{ beforeNano: 0, afterNano: 400 }])
      expect(yield* store.usage([line])).toEqual([{ spentNano: 400, reservedNano: 0 }])
    }))
}
