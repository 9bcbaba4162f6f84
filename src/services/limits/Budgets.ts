import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { AppConfig } from "../../config"
import {
  type Budget,
  type BudgetPeriodSpan,
  type BudgetScope,
  crossedThresholds,
  fromNanoUsd,
  periodAt,
  toNanoUsd
} from "../../domain/budgets"
import type { Principal } from "../../domain/principal"
import { type BudgetRefusal, BudgetExceeded, BudgetUnavailable, type LimitReadings } from "../../domain/refusals"
import type { Workspace } from "../../domain/workspace"
import { BudgetAlerts } from "./BudgetAlerts"
import { makeBudgetSlices } from "./budgetSlices"
import { type BudgetLine, BudgetStore, type BudgetStoreFailure, type LineUsage } from "./BudgetStore"

/** A reservation held for a request: settled once, to its recorded cost, when the request ends. */
export interface BudgetHold {
  /** Never fails: a settlement the store refuses is retried, then logged (the reservation lapses meanwhile). */
  readonly settle: (costUsd: number) => Effect.Effect<void>
}

/** A budget as it applies now: whose, its period, and the store's line. */
interface Applied {
  readonly scope: BudgetScope
  readonly keyId: string | null
  readonly budget: Budget
  readonly line: BudgetLine
}

/** A budget's state in its current period, for the key list and the console. */
export interface BudgetStatus {
  readonly spentUsd: number
  readonly reservedUsd: number
  readonly periodStart: Date
  readonly resetAt: Date
}

const nothingHeld: BudgetHold = { settle: () => Effect.void }

/** What a request of a principal without budgets reserves: nothing, made once (most requests take this path). */
const nothingReserved: Effect.Effect<BudgetHold> = Effect.succeed(nothingHeld)

/** Whether any budget applies to the principal's requests (budgetsOf finds at least one). */
const hasBudget = (principal: Principal): boolean => {
  const workspaceBudget = principal.workspace.settings.budget
  return principal.budget !== undefined || (workspaceBudget !== undefined && workspaceBudget !== null)
}

/** How long a slice of a budget takes requests before it is written back (docs/budgets.md). */
const sliceLifeMs = 1_000
/** The share of a budget's amount a slice asks for. */
const sliceShare = 0.01
/** How often the slices past their life, and those whose requests ended, are written back. */
const sweepEveryMs = 250

/** The store's name of a budget; both carry the workspace's id as a Redis hash tag, so one script reaches both. */
const lineKey = (workspaceId: string, keyId: string | null) =>
  keyId === null ? `{${workspaceId}}:workspace` : `{${workspaceId}}:key:${keyId}`

/** A budget's period at an instant, in a time zone. */
type SpanOf = (period: Budget["period"], timezone: string, now: number) => BudgetPeriodSpan

const applied = (spanOf: SpanOf, workspace: Workspace, keyId: string | null, budget: Budget, now: number): Applied => {
  const span = spanOf(budget.period, workspace.settings.timezone, now)
  return {
    scope: keyId === null ? "workspace" : "key",
    keyId,
    budget,
    line: { key: lineKey(workspace.id, keyId), periodStart: span.start, periodEnd: span.end, limitNano: toNanoUsd(budget.amountUsd) }
  }
}

/** The budgets a request of this principal counts against: the key's and the workspace's, when set. */
const budgetsOf = (spanOf: SpanOf, principal: Principal, now: number): ReadonlyArray<Applied> => {
  const workspaceBudget = principal.workspace.settings.budget
  const found: Array<Applied> = []
  if (principal.budget !== undefined) found.push(applied(spanOf, principal.workspace, principal.keyId, principal.budget, now))
  if (workspaceBudget !== undefined && workspaceBudget !== null) found.push(applied(spanOf, principal.workspace, null, workspaceBudget, now))
  return found
}

const statusOf = (line: BudgetLine, usage: LineUsage): BudgetStatus => ({
  spentUsd: fromNanoUsd(usage.spentNano),
  reservedUsd: fromNanoUsd(usage.reservedNano),
  periodStart: new Date(line.periodStart),
  resetAt: new Date(line.periodEnd)
})

/**
 * Dollar budgets (docs/budgets.md). Before a request goes upstream it reserves its largest possible cost against
 * every budget that applies, atomically in the shared store; it is refused when one cannot hold it. When it ends
 * the reservation becomes its recorded cost, and each alert threshold crossed is said to BudgetAlerts.
 */
export class Budgets extends Context.Tag("Budgets")<Budgets, {
  /** `maxCostUsd`: the request's input as counted plus its maximum output, at the catalog's prices. */
  readonly reserve: (
    principal: Principal,
    maxCostUsd: number,
    readings: LimitReadings | undefined
  ) => Effect.Effect<BudgetHold, BudgetRefusal>
  /** A budget's spend and reservations in its current period (`keyId` null: the workspace's). */
  readonly status: (workspace: Workspace, keyId: string | null, budget: Budget) => Effect.Effect<BudgetStatus, BudgetStoreFailure>
}>() {
  static readonly layer = Layer.scoped(
    Budgets,
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const alerts = yield* BudgetAlerts
      const { upstreamLimits } = yield* AppConfig
      // A period is worked out in its time zone once (luxon), then reused until it ends.
      const spans = new Map<string, BudgetPeriodSpan>()
      const spanOf: SpanOf = (period, timezone, now) => {
        const key = `${period}|${timezone}`
        const known = spans.get(key)
        if (known !== undefined && known.start <= now && now < known.end) return known
        const span = periodAt(period, timezone, now)
        if (spans.size >= 1_024) spans.clear()
        spans.set(key, span)
        return span
      }
      /** The budget each line was last reserved for: what its alerts name when its slice is written back. */
      const appliedOf = new Map<string, { readonly workspaceId: string; readonly one: Applied }>()
      const slices = makeBudgetSlices(store, {
        // A reservation outlives the longest exchange, then lapses: a crash cannot hold it for ever.
        ttlMs: upstreamLimits.exchangeDeadlineMs + 60_000,
        lifeMs: sliceLifeMs,
        share: sliceShare,
        settled: (line, { afterNano, beforeNano }) => {
          const known = appliedOf.get(line.key)
          if (known === undefined) return Effect.void
          const { one, workspaceId } = known
          const crossed = crossedThresholds(one.budget.alertThresholds ?? [], one.budget.amountUsd, fromNanoUsd(beforeNano), fromNanoUsd(afterNano))
          return Effect.forEach(crossed, (threshold) =>
            alerts.thresholdReached({
              workspaceId,
              keyId: one.keyId,
              budget: { amountUsd: one.budget.amountUsd, period: one.budget.period, periodStart: new Date(line.periodStart).toISOString() },
              threshold,
              spentUsd: fromNanoUsd(afterNano)
            }), { discard: true })
        }
      })
      // Slices past their life and the requests that ended are written back every so often, and all at shutdown.
      // With no slice open the loop waits for one instead of waking every round (an idle service allocates nothing).
      const sweepRound = Effect.clockWith((clock) => slices.sweep(clock.unsafeCurrentTimeMillis())).pipe(Effect.zipRight(slices.untilBusy))
      yield* Effect.forkScoped(Effect.repeat(sweepRound, Schedule.spaced(Duration.millis(sweepEveryMs))))
      yield* Effect.addFinalizer(() => Effect.clockWith((clock) => slices.sweep(clock.unsafeCurrentTimeMillis(), true)))

      return {
        reserve: (principal, maxCostUsd, readings) =>
          !hasBudget(principal) ? nothingReserved : Effect.clockWith((clock) => {
            const now = clock.unsafeCurrentTimeMillis()
            const budgets = budgetsOf(spanOf, principal, now)
            if (budgets.length === 0) return Effect.succeed(nothingHeld)
            for (const one of budgets) appliedOf.set(one.line.key, { workspaceId: principal.workspace.id, one })
            return slices.take(budgets.map((one) => one.line), toNanoUsd(maxCostUsd), now).pipe(
              Effect.catchAll((failure) =>
                Effect.zipRight(
                  Effect.logError("budgets cannot be checked: the store is unavailable, refusing").pipe(
                    Effect.annotateLogs({ cause: String(failure.cause) })
                  ),
                  Effect.fail(new BudgetUnavailable({ readings }))
                )),
              Effect.flatMap((decision): Effect.Effect<BudgetHold, BudgetRefusal> => {
                if (decision.allowed) {
                  return Effect.succeed({ settle: (costUsd) => Effect.sync(() => decision.taken.release(toNanoUsd(costUsd))) })
                }
                const refused = budgets[decision.refusedLine]!
                return Effect.fail(new BudgetExceeded({
                  scope: refused.scope,
                  amountUsd: refused.budget.amountUsd,
                  period: refused.budget.period,
                  resetAt: refused.line.periodEnd,
                  timezone: principal.workspace.settings.timezone,
                  readings
                }))
              })
            )
          }),
        status: (workspace, keyId, budget) =>
          Effect.clockWith((clock) => {
            const { line } = applied(spanOf, workspace, keyId, budget, clock.unsafeCurrentTimeMillis())
            return Effect.map(store.usage([line]), ([usage]) => statusOf(line, usage!))
          })
      }
    })
  )
}
