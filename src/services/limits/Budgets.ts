import { Context, Duration, Effect, Layer, Schedule } from "effect"
import * as crypto from "node:crypto"
import { AppConfig } from "../../config"
import {
  type Budget,
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

/** The store's name of a budget; both carry the workspace's id as a Redis hash tag, so one script reaches both. */
const lineKey = (workspaceId: string, keyId: string | null) =>
  keyId === null ? `{${workspaceId}}:workspace` : `{${workspaceId}}:key:${keyId}`

const applied = (workspace: Workspace, keyId: string | null, budget: Budget, now: number): Applied => {
  const span = periodAt(budget.period, workspace.settings.timezone, now)
  return {
    scope: keyId === null ? "workspace" : "key",
    keyId,
    budget,
    line: { key: lineKey(workspace.id, keyId), periodStart: span.start, periodEnd: span.end, limitNano: toNanoUsd(budget.amountUsd) }
  }
}

/** The budgets a request of this principal counts against: the key's and the workspace's, when set. */
const budgetsOf = (principal: Principal, now: number): ReadonlyArray<Applied> => {
  const workspaceBudget = principal.workspace.settings.budget
  const found: Array<Applied> = []
  if (principal.budget !== undefined) found.push(applied(principal.workspace, principal.keyId, principal.budget, now))
  if (workspaceBudget !== undefined && workspaceBudget !== null) found.push(applied(principal.workspace, null, workspaceBudget, now))
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
  static readonly layer = Layer.effect(
    Budgets,
    Effect.gen(function*() {
      const store = yield* BudgetStore
      const alerts = yield* BudgetAlerts
      const { upstreamLimits } = yield* AppConfig
      // A reservation outlives the longest exchange, then lapses: a crash cannot hold it for ever.
      const ttlMs = upstreamLimits.exchangeDeadlineMs + 60_000

      const alert = (principal: Principal, budgets: ReadonlyArray<Applied>, settled: ReadonlyArray<{ beforeNano: number; afterNano: number }>) =>
        Effect.forEach(budgets, (one, i) => {
          const { afterNano, beforeNano } = settled[i]!
          const crossed = crossedThresholds(one.budget.alertThresholds ?? [], one.budget.amountUsd, fromNanoUsd(beforeNano), fromNanoUsd(afterNano))
          return Effect.forEach(crossed, (threshold) =>
            alerts.thresholdReached({
              workspaceId: principal.workspace.id,
              keyId: one.keyId,
              budget: { amountUsd: one.budget.amountUsd, period: one.budget.period, periodStart: new Date(one.line.periodStart).toISOString() },
              threshold,
              spentUsd: fromNanoUsd(afterNano)
            }))
        }, { discard: true })

      const holdFor = (principal: Principal, budgets: ReadonlyArray<Applied>, id: string): BudgetHold => {
        const lines = budgets.map((one) => one.line)
        let settled = false
        return {
          settle: (costUsd) => {
            if (settled) return Effect.void
            settled = true
            return store.settle(id, lines, toNanoUsd(costUsd)).pipe(
              Effect.retry(Schedule.exponential(Duration.millis(200)).pipe(Schedule.intersect(Schedule.recurs(5)))),
              Effect.flatMap((after) => alert(principal, budgets, after)),
              Effect.catchAll((failure) =>
                Effect.logError("a budget reservation could not be settled: it lapses unsettled").pipe(
                  Effect.annotateLogs({ workspaceId: principal.workspace.id, keyId: principal.keyId, costUsd, cause: String(failure.cause) })
                )),
              // Off the request path: the answer does not wait for the store.
              Effect.forkDaemon,
              Effect.asVoid
            )
          }
        }
      }

      return {
        reserve: (principal, maxCostUsd, readings) =>
          Effect.clockWith((clock) => {
            const budgets = budgetsOf(principal, clock.unsafeCurrentTimeMillis())
            if (budgets.length === 0) return Effect.succeed(nothingHeld)
            const id = crypto.randomUUID()
            return store.reserve(id, budgets.map((one) => one.line), toNanoUsd(maxCostUsd), ttlMs).pipe(
              Effect.catchAll((failure) =>
                Effect.zipRight(
                  Effect.logError("budgets cannot be checked: the store is unavailable, refusing").pipe(
                    Effect.annotateLogs({ cause: String(failure.cause) })
                  ),
                  Effect.fail(new BudgetUnavailable({ readings }))
                )),
              Effect.flatMap((decision) => {
                if (decision.allowed) return Effect.succeed(holdFor(principal, budgets, id))
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
            const { line } = applied(workspace, keyId, budget, clock.unsafeCurrentTimeMillis())
            return Effect.map(store.usage([line]), ([usage]) => statusOf(line, usage!))
          })
      }
    })
  )
}
