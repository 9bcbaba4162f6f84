import { Context, Effect, Layer } from "effect"
import type { BudgetThresholdReached } from "../../domain/budgets"
import { Webhooks } from "../webhooks/Webhooks"

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

  /**
   * Each crossing announced to the workspace's webhooks as `budget.threshold_reached` (its id made from what it
   * announces, so that it is sent once however many instances say it). A store that cannot take it is logged:
   * the request that crossed the threshold is not failed for it.
   */
  static readonly webhooks = Layer.effect(
    BudgetAlerts,
    Effect.map(Webhooks, (webhooks) => ({
      thresholdReached: (event: BudgetThresholdReached) =>
        webhooks.publish(event.workspaceId, { type: "budget.threshold_reached", timestamp: new Date().toISOString(), data: event }).pipe(
          Effect.asVoid,
          Effect.catchAll((failure) =>
            Effect.logWarning("budget threshold not announced to the webhooks").pipe(
              Effect.annotateLogs({ workspaceId: event.workspaceId, keyId: event.keyId, threshold: event.threshold, failure: String(failure) })
            ))
        )
    }))
  )
}
