import { Context, Effect, Layer } from "effect"
import type { BudgetThresholdReached } from "../../domain/budgets"

/**
 * Where a reached alert threshold goes. Each crossing is said once across all instances (it happens in one
 * settlement, atomic in the shared store); delivering it (webhooks) is another service's, which replaces
 * `logOnly`.
 */
export class BudgetAlerts extends Context.Tag("BudgetAlerts")<BudgetAlerts, {
  readonly thresholdReached: (event: BudgetThresholdReached) => Effect.Effect<void>
}>() {
  /** Until webhooks deliver them: a log line per crossing. */
  static readonly logOnly = Layer.succeed(BudgetAlerts, {
    thresholdReached: (event) =>
      Effect.logInfo("budget threshold reached").pipe(
        Effect.annotateLogs({
          workspaceId: event.workspaceId,
          keyId: event.keyId,
          threshold: event.threshold,
          spentUsd: event.spentUsd,
          amountUsd: event.budget.amountUsd,
          period: event.budget.period
        })
      )
  })
}
