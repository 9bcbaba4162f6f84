import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import type { WebhookEventType } from "../../../domain/webhookEvent"
import { orStorageFailure } from "../../../platform/orStorageFailure"
import { isUuid } from "../../workspaces/Workspaces"
import type { ClaimedDelivery, DeliveryLine, StoredWebhook, WebhookStoreShape } from "./contract"

interface WebhookRow {
  readonly id: string
  readonly workspace_id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly secret: string
  readonly created_at: Date
}

const fromRow = (row: WebhookRow): StoredWebhook => ({
  id: row.id,
  workspaceId: row.workspace_id,
  url: row.url,
  events: row.events as ReadonlyArray<WebhookEventType>,
  secret: row.secret,
  createdAt: row.created_at
})

/** The store over PostgreSQL: claims with FOR UPDATE SKIP LOCKED, so instances never take the same delivery at once. */
export const makePostgresWebhookStore: Effect.Effect<WebhookStoreShape, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): WebhookStoreShape => {
    const columns = sql`id, workspace_id, url, events, secret, created_at`
    return {
      create: (webhook) =>
        orStorageFailure(sql<WebhookRow>`
          INSERT INTO webhooks (id, workspace_id, url, events, secret)
          VALUES (${crypto.randomUUID()}, ${webhook.workspaceId}, ${webhook.url}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(webhook.events)}::jsonb)), ${webhook.secret})
          RETURNING ${columns}`).pipe(Effect.map((rows) => fromRow(rows[0]!))),
      list: (workspaceId) =>
        isUuid(workspaceId)
          ? orStorageFailure(sql<WebhookRow>`
              SELECT ${columns} FROM webhooks WHERE workspace_id = ${workspaceId} ORDER BY created_at, id`)
            .pipe(Effect.map((rows) => rows.map(fromRow)))
          : Effect.succeed([]),
      remove: (workspaceId, webhookId) =>
        isUuid(workspaceId) && isUuid(webhookId)
          ? orStorageFailure(sql<WebhookRow>`
              DELETE FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${webhookId} RETURNING ${columns}`)
            .pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)))
          : Effect.succeed(Option.none()),
      deliveries: (workspaceId, webhookId, limit) =>
        !isUuid(workspaceId) || !isUuid(webhookId)
          ? Effect.succeed(Option.none())
          : orStorageFailure(Effect.gen(function*() {
            const found = yield* sql`SELECT 1 FROM webhooks WHERE workspace_id = ${workspaceId} AND id = ${webhookId}`
            if (found.length === 0) return Option.none()
            // The deliveries still to be tried, then every attempt made: newest first.
            const rows = yield* sql<{
              event_id: string
              type: string
              attempt: number
              status: DeliveryLine["status"]
              at: Date
              response_status: number | null
              error: string | null
            }>`
              SELECT * FROM (
                SELECT d.event_id, e.type, d.attempts + 1 AS attempt, 'pending' AS status, d.next_at AS at,
                       NULL::integer AS response_status, NULL::text AS error, 0::bigint AS seq
                FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
                WHERE d.webhook_id = ${webhookId} AND d.state = 'pending'
                UNION ALL
                SELECT a.event_id, e.type, a.attempt, a.outcome, a.at, a.response_status, a.error, a.id
                FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
                WHERE a.webhook_id = ${webhookId}
              ) lines
              ORDER BY at DESC, seq DESC LIMIT ${limit}`
            return Option.some(rows.map((row): DeliveryLine => ({
              eventId: row.event_id,
              type: row.type,
              attempt: row.attempt,
              status: row.status,
              at: row.at,
              responseStatus: row.response_status,
              error: row.error
            })))
          })),
      enqueue: (event, at) =>
        orStorageFailure(sql<{ created: number }>`
          WITH event AS (
            INSERT INTO webhook_events (id, workspace_id, type, body)
            VALUES (${event.id}, ${event.workspaceId}, ${event.type}, ${event.body})
            ON CONFLICT (id) DO NOTHING
            RETURNING id
          ), queued AS (
            INSERT INTO webhook_deliveries (webhook_id, event_id, next_at)
            SELECT w.id, event.id, ${at} FROM event, webhooks w
            WHERE w.workspace_id = ${event.workspaceId} AND ${event.type} = ANY (w.events)
            RETURNING event_id
          )
          SELECT (SELECT count(*) FROM event)::int AS created, (SELECT count(*) FROM queued)::int AS queued`)
          .pipe(Effect.map((rows) => (rows[0]?.created ?? 0) > 0)),
      claimDue: (now, leaseUntil, limit) =>
        orStorageFailure(sql<{
          webhook_id: string
          event_id: string
          attempts: number
          url: string
          secret: string
          type: string
          body: string
        }>`
          UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_at = ${leaseUntil}
          FROM (
            SELECT webhook_id, event_id FROM webhook_deliveries
            WHERE state = 'pending' AND next_at <= ${now}
            ORDER BY next_at LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          ) due, webhooks w, webhook_events e
          WHERE d.webhook_id = due.webhook_id AND d.event_id = due.event_id AND w.id = d.webhook_id AND e.id = d.event_id
          RETURNING d.webhook_id, d.event_id, d.attempts, w.url, w.secret, e.type, e.body`)
          .pipe(Effect.map((rows) =>
            rows.map((row): ClaimedDelivery => ({
              webhookId: row.webhook_id,
              eventId: row.event_id,
              attempt: row.attempts,
              url: row.url,
              secret: row.secret,
              type: row.type,
              body: row.body
            }))
          )),
      recordAttempt: (delivery, outcome) => {
        const state = outcome.delivered ? "delivered" : outcome.retryAt === null ? "abandoned" : "pending"
        return orStorageFailure(sql.withTransaction(Effect.gen(function*() {
          // Only while the delivery is still this attempt's: a sender whose claim ran out changes nothing of the next one.
          const changed = yield* sql`
            UPDATE webhook_deliveries SET state = ${state}, next_at = ${outcome.retryAt ?? outcome.at}
            WHERE webhook_id = ${delivery.webhookId} AND event_id = ${delivery.eventId} AND attempts = ${delivery.attempt}
            RETURNING 1`
          yield* sql`
            INSERT INTO webhook_attempts (webhook_id, event_id, attempt, at, outcome, response_status, error)
            SELECT ${delivery.webhookId}, ${delivery.eventId}, ${delivery.attempt}, ${outcome.at},
                   ${outcome.delivered ? "delivered" : changed.length > 0 && outcome.retryAt === null ? "abandoned" : "failed"},
                   ${outcome.responseStatus}, ${outcome.error}
            WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE webhook_id = ${delivery.webhookId} AND event_id = ${delivery.eventId})`
        })))
      }
    }
  }
)
