import { Effect, Option } from "effect"
import type { Workspace } from "../domain/workspace"
import type { Budget } from "../domain/budgets"
import type { ApiKeyRecord, KeyLimits } from "../services/identity/ApiKeys"
import type { Budgets } from "../services/limits/Budgets"
import { type WorkspaceNotFound, type Workspaces } from "../services/workspaces/Workspaces"
import type { StorageFailure } from "../platform/StorageFailure"
import { keyView } from "./consoleViews"

/**
 * Keys as the admin API and the console list them: each with what it spent in its budget's current period
 * (null without a budget, or while the budget store cannot be read: a listing is not refused for it).
 */
export const keyViewsWithSpend = (budgets: Budgets["Type"], workspace: Workspace, records: ReadonlyArray<ApiKeyRecord>) =>
  Effect.forEach(records, (record) =>
    Option.match(record.budget, {
      onNone: () => Effect.succeed(keyView(record, null)),
      onSome: (budget) =>
        budgets.status(workspace, record.id, budget).pipe(
          Effect.map((status) => keyView(record, status.spentUsd)),
          Effect.orElseSucceed(() => keyView(record, null))
        )
    }), { concurrency: 8 })

/** One key's view with its spend, its workspace read first. */
export const keyViewWithSpend = (
  workspaces: Workspaces["Type"],
  budgets: Budgets["Type"],
  record: ApiKeyRecord
): Effect.Effect<ReturnType<typeof keyView>, WorkspaceNotFound | StorageFailure> =>
  Effect.flatMap(workspaces.get(record.workspaceId), (workspace) =>
    Effect.map(keyViewsWithSpend(budgets, workspace, [record]), (views) => views[0]!))

/** A payload's budget and expiry as the key store takes them (the expiry checked as an instant by the schema). */
export const keyLimits = (payload: { readonly budget?: Budget | null | undefined; readonly expiresAt?: string | null | undefined }): KeyLimits => ({
  budget: payload.budget,
  expiresAt: payload.expiresAt === undefined || payload.expiresAt === null ? payload.expiresAt : new Date(payload.expiresAt)
})
