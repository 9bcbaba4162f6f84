import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Ref, TestClock } from "effect"
import { AppConfig } from "../../../src/config"
import { type BudgetThresholdReached, periodAt } from "../../../src/domain/budgets"
import type { Principal } from "../../../src/domain/principal"
import { defaultWorkspaceSettings } from "../../../src/domain/workspaceSettings"
import { providerB } from "../../../src/providers/providerB/dialect"
import { renderRefusal } from "../../../src/providers/render"
import { BudgetAlerts } from "../../../src/services/limits/BudgetAlerts"
import { Budgets } from "../../../src/services/limits/Budgets"
import { BudgetStore, BudgetStoreFailure } from "../../../src/services/limits/BudgetStore"
import { makeTestLayer } from "../../support/makeTestLayer"

const principal = (budgets: Pick<Principal, "budget"> & { readonly workspaceBudget?: Principal["workspace"]["settings"]["budget"] }): Principal => ({
  keyId: "00000000-0000-4000-8000-0000000000k1",
  scopes: ["COMPLETION_API"],
  budget: budgets.budget,
  workspace: {
    id: "00000000-0000-4000-8000-000000000001",
    name: "budgets",
    settings: { ...defaultWorkspaceSettings, timezone: "Europe/Berlin", budget: budgets.workspaceBudget ?? null },
    createdAt: new Date(0)
  }
})

const config = Layer.provide(AppConfig.layer, Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", "/tmp/budgets-unit"]]))))

/** Budgets over the given store, its alerts kept in a Ref. */
const budgetsWith = (store: Layer.Layer<BudgetStore>, said: Ref.Ref<ReadonlyArray<BudgetThresholdReached>>) =>
  Budgets.layer.pipe(
    Layer.provide(store),
    Layer.provide(Layer.succeed(BudgetAlerts, { thresholdReached: (event) => Ref.update(said, (all) => [...all, event]) })),
    Layer.provide(config)
  )

describe("periods", () => {
  it("start at midnight in the workspace's zone: weeks on Monday, months on the 1st", () => {
    // Friday 2026-11-27 10:00 UTC, 11:00 in Berlin.
    const now = Date.UTC(2026, 10, 27, 10)
    expect(new Date(periodAt("day", "Europe/Berlin", now).start).toISOString()).toBe("2026-11-26T23:00:00.000Z")
    expect(new Date(periodAt("week", "Europe/Berlin", now).start).toISOString()).toBe("2026-11-22T23:00:00.000Z")
    expect(new Date(periodAt("month", "Europe/Berlin", now).end).toISOString()).toBe("2026-11-30T23:00:00.000Z")
    expect(new Date(periodAt("month", "UTC", now).start).toISOString()).toBe("2026-11-01T00:00:00.000Z")
    // The month across a clock change: October in Berlin starts at +02:00 and ends at +01:00.
    const october = periodAt("month", "Europe/Berlin", Date.UTC(2026, 9, 15))
    expect([new Date(october.start).toISOString(), new Date(october.end).toISOString()]).toEqual(["2026-09-30T22:00:00.000Z", "2026-10-31T23:00:00.000Z"])
  })
})

describe("Budgets", () => {
  it.effect("reserves against the key's and the workspace's budget; the refusal names the one that did not fit", () =>
    Effect.gen(function*() {
      const said = yield* Ref.make<ReadonlyArray<BudgetThresholdReached>>([])
      yield* TestClock.setTime(Date.UTC(2026, 10, 27, 10))
      const caller = principal({ budget: { amountUsd: 10, period: "day" }, workspaceBudget: { amountUsd: 1, period: "month" } })
      const outcome = yield* Effect.gen(function*() {
        const budgets = yield* Budgets
        const hold = yield* budgets.reserve(caller, 0.6, undefined)
        const refused = yield* Effect.flip(budgets.reserve(caller, 0.6, undefined))
        yield* hold.settle(0.2)
        return refused
      }).pipe(Effect.provide(budgetsWith(BudgetStore.memory, said)))
      expect(outcome).toMatchObject({ _tag: "BudgetExceeded", scope: "workspace", amountUsd: 1, period: "month", timezone: "Europe/Berlin" })
      const rendered = renderRefusal(providerB, outcome)
      expect(rendered.problem).toMatchObject({ status: 429, code: "budget_exceeded" })
      expect(rendered.problem.message).toContain("This workspace's budget of $1.00 per month")
      expect(rendered.problem.message).toContain("resets at 2026-12-01T00:00:00+01:00 (Europe/Berlin)")
      expect(rendered.headers["x-should-retry"]).toBe("false")
    }))

  it.effect("tells each threshold once, when a settlement crosses it, with the budget and the spend", () =>
    Effect.gen(function*() {
      const said = yield* Ref.make<ReadonlyArray<BudgetThresholdReached>>([])
      yield* TestClock.setTime(Date.UTC(2026, 10, 27, 10))
      const caller = principal({ budget: { amountUsd: 1, period: "week", alertThresholds: [0.5, 0.8, 1] } })
      yield* Effect.gen(function*() {
        const budgets = yield* Budgets
        for (const cost of [0.3, 0.3, 0.1, 0.3]) {
          const hold = yield* budgets.reserve(caller, 0.3, undefined)
          yield* hold.settle(cost)
          // The request's slice is written back (and its alerts told) by the next sweep.
          yield* TestClock.adjust("300 millis")
        }
      }).pipe(Effect.provide(budgetsWith(BudgetStore.memory, said)))
      const events = yield* Effect.repeat(Ref.get(said), { until: (all) => all.length >= 3, times: 100 })
      expect(events.map((e) => [e.threshold, Math.round(e.spentUsd * 10) / 10])).toEqual([[0.5, 0.6], [0.8, 1], [1, 1]])
      expect(events[0]).toMatchObject({
        keyId: caller.keyId,
        workspaceId: caller.workspace.id,
        budget: { amountUsd: 1, period: "week", periodStart: "2026-11-22T23:00:00.000Z" }
      })
    }))

  it.effect("refuses (never lets through) when a budget applies and the store cannot be asked; without a budget, never asks", () =>
    Effect.gen(function*() {
      const said = yield* Ref.make<ReadonlyArray<BudgetThresholdReached>>([])
      const down = makeTestLayer(BudgetStore)({ reserve: () => Effect.fail(new BudgetStoreFailure({ cause: "connection refused" })) })
      const [refused, unbudgeted] = yield* Effect.gen(function*() {
        const budgets = yield* Budgets
        return [
          yield* Effect.flip(budgets.reserve(principal({ budget: { amountUsd: 5, period: "day" } }), 0.01, undefined)),
          yield* Effect.either(budgets.reserve(principal({}), 0.01, undefined))
        ] as const
      }).pipe(Effect.provide(budgetsWith(down, said)))
      expect(refused._tag).toBe("BudgetUnavailable")
      expect(renderRefusal(providerB, refused).problem).toMatchObject({ status: 503, code: "budget_unavailable" })
      expect(unbudgeted._tag).toBe("Right")
    }))
})
