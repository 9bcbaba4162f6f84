import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import type { EventNamedEntity, EventUser, UsageEvent } from "../api/schemas/events"
import { StorageFailure } from "./StorageFailure"

/** What a batch did: events newly stored, and events whose id the workspace had already sent. */
export interface IngestResult {
  readonly accepted: number
  readonly duplicates: number
}

/**
 * The usage ledger's write side for platform activity (sql/0002_usage_ledger.sql). One batch is one
 * transaction: dimensions (users, assistants, projects, workflows) are upserted, then the events are
 * inserted with ON CONFLICT DO NOTHING on (workspace_id, event_id), so a retried batch adds nothing
 * twice. Callers validate the batch first: the repository assumes well-formed events.
 */
export class UsageRepository extends Context.Tag("UsageRepository")<UsageRepository, {
  readonly ingest: (workspaceId: string, events: ReadonlyArray<UsageEvent>) => Effect.Effect<IngestResult, StorageFailure>
}>() {
  static readonly layer = Layer.effect(
    UsageRepository,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const run = (text: string, params: ReadonlyArray<string>) =>
        sql.unsafe<{ readonly inserted: number }>(text, params)

      const ingest = (workspaceId: string, events: ReadonlyArray<UsageEvent>) => {
        const batch = splitBatch(events)
        const inserted = (rows: ReadonlyArray<{ readonly inserted: number }>) => rows[0]?.inserted ?? 0
        return sql.withTransaction(
          Effect.gen(function*() {
            // Always in this order, so concurrent batches lock dimension rows alike.
            if (batch.users.length > 0) yield* run(upsertUsers, [workspaceId, JSON.stringify(batch.users)])
            for (const [table, entities] of [
              ["workspace_assistants", batch.assistants],
              ["workspace_projects", batch.projects],
              ["workspace_workflows", batch.workflows]
            ] as const) {
              if (entities.length > 0) yield* run(upsertNamed(table), [workspaceId, JSON.stringify(entities)])
            }
            const messages = batch.messages.length === 0
              ? 0
              : inserted(yield* run(insertMessages, [workspaceId, JSON.stringify(batch.messages)]))
            const runs = batch.runs.length === 0
              ? 0
              : inserted(yield* run(insertRuns, [workspaceId, JSON.stringify(batch.runs)]))
            return { accepted: messages + runs, duplicates: events.length - messages - runs }
          })
        ).pipe(Effect.mapError((cause: SqlError.SqlError) => new StorageFailure({ cause })))
      }
      return { ingest }
    })
  )
}

// -------------------------------------------------------------------------------------------------
// The batch as the SQL reads it: one JSON array per table, dimensions deduplicated.

interface MessageRow {
  readonly event_id: string
  readonly occurred_at: string
  readonly user_id: string
  readonly assistant_id: string | null
  readonly project_id: string | null
  readonly model: string
  readonly input_tokens: number
  readonly output_tokens: number
  readonly feature: string | null
  readonly conversation_id: string | null
}

interface RunRow {
  readonly event_id: string
  readonly started_at: string
  readonly finished_at: string
  readonly workflow_id: string
  readonly user_id: string | null
  readonly project_id: string | null
  readonly status: string
}

/**
 * Keeps, per entity and field, the value of the latest event (by its time) that carries the field:
 * a batch that mentions a user twice stores the newer email and name, whatever the order in the batch.
 */
const latestValues = <Fields extends Record<string, string | null>>() => {
  const known = new Map<string, { values: Record<string, string | null>; at: Record<string, number> }>()
  return {
    add: (id: string, at: number, fields: Fields) => {
      const entry = known.get(id) ?? { values: {}, at: {} }
      for (const [field, value] of Object.entries(fields)) {
        const seenAt = entry.at[field]
        if (value !== null && (seenAt === undefined || at >= seenAt)) {
          entry.values[field] = value
          entry.at[field] = at
        } else if (!(field in entry.values)) {
          entry.values[field] = null
        }
      }
      known.set(id, entry)
    },
    // Sorted by id: concurrent batches lock dimension rows in the same order (no deadlock). Each
    // field comes with the time of the event that carried it (`<field>_at`), compared in the upsert.
    rows: (): ReadonlyArray<{ readonly external_id: string } & Record<string, string | null>> =>
      [...known.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([externalId, entry]) => {
          const row: Record<string, string | null> = { external_id: externalId, ...entry.values }
          for (const field of Object.keys(entry.values)) {
            const at = entry.at[field]
            row[`${field}_at`] = at === undefined ? null : new Date(at).toISOString()
          }
          return row as { readonly external_id: string } & Record<string, string | null>
        })
  }
}

const splitBatch = (events: ReadonlyArray<UsageEvent>) => {
  const users = latestValues<{ email: string | null; name: string | null }>()
  const assistants = latestValues<{ name: string }>()
  const projects = latestValues<{ name: string }>()
  const workflows = latestValues<{ name: string }>()
  const messages: Array<MessageRow> = []
  const runs: Array<RunRow> = []
  const addUser = (user: EventUser, at: number) =>
    users.add(user.id, at, { email: user.email ?? null, name: user.name ?? null })
  const addNamed = (target: typeof assistants, entity: EventNamedEntity, at: number) =>
    target.add(entity.id, at, { name: entity.name })

  for (const event of events) {
    if (event.type === "message") {
      const at = event.occurredAt.getTime()
      addUser(event.user, at)
      if (event.assistant) addNamed(assistants, event.assistant, at)
      if (event.project) addNamed(projects, event.project, at)
      messages.push({
        event_id: event.id,
        occurred_at: event.occurredAt.toISOString(),
        user_id: event.user.id,
        assistant_id: event.assistant?.id ?? null,
        project_id: event.project?.id ?? null,
        model: event.model,
        input_tokens: event.inputTokens,
        output_tokens: event.outputTokens,
        feature: event.feature ?? null,
        conversation_id: event.conversationId ?? null
      })
    } else {
      const at = event.startedAt.getTime()
      addNamed(workflows, event.workflow, at)
      if (event.user) addUser(event.user, at)
      if (event.project) addNamed(projects, event.project, at)
      runs.push({
        event_id: event.id,
        started_at: event.startedAt.toISOString(),
        finished_at: event.finishedAt.toISOString(),
        workflow_id: event.workflow.id,
        user_id: event.user?.id ?? null,
        project_id: event.project?.id ?? null,
        status: event.status
      })
    }
  }
  return {
    users: users.rows(),
    assistants: assistants.rows(),
    projects: projects.rows(),
    workflows: workflows.rows(),
    messages,
    runs
  }
}

// -------------------------------------------------------------------------------------------------
// SQL. $1 is the workspace id, $2 a JSON array. json (not jsonb): parsed once, never stored.

/**
 * A field's value replaces the stored one only if its event is at least as new as the event that
 * set the stored one: a field absent from the event keeps the stored value, and a retried or late
 * batch of older events changes nothing. A row is rewritten only when a newer event carries a field
 * (its time moves on even if the value is the same, so that an older value cannot come back later).
 */
const newer = (table: string, field: string) =>
  `EXCLUDED.${field} IS NOT NULL AND (${table}.${field}_at IS NULL OR EXCLUDED.${field}_at >= ${table}.${field}_at)`
const kept = (table: string, field: string) =>
  `${field} = CASE WHEN ${newer(table, field)} THEN EXCLUDED.${field} ELSE ${table}.${field} END,
      ${field}_at = CASE WHEN ${newer(table, field)} THEN EXCLUDED.${field}_at ELSE ${table}.${field}_at END`
const changes = (table: string, field: string) =>
  `(${newer(table, field)}) AND (${table}.${field}, ${table}.${field}_at) IS DISTINCT FROM (EXCLUDED.${field}, EXCLUDED.${field}_at)`

const upsertUsers = `INSERT INTO workspace_users (workspace_id, external_id, email, email_at, name, name_at)
SELECT $1::uuid, d.external_id, d.email, d.email_at, d.name, d.name_at
FROM json_to_recordset($2::json) AS d(external_id text, email text, email_at timestamptz, name text, name_at timestamptz)
ORDER BY d.external_id
ON CONFLICT (workspace_id, external_id) DO UPDATE
  SET ${kept("workspace_users", "email")},
      ${kept("workspace_users", "name")},
      updated_at = now()
  WHERE ${changes("workspace_users", "email")} OR ${changes("workspace_users", "name")}`

const upsertNamed = (table: "workspace_assistants" | "workspace_projects" | "workspace_workflows") =>
  `INSERT INTO ${table} (workspace_id, external_id, name, name_at)
SELECT $1::uuid, d.external_id, d.name, d.name_at
FROM json_to_recordset($2::json) AS d(external_id text, name text, name_at timestamptz)
ORDER BY d.external_id
ON CONFLICT (workspace_id, external_id) DO UPDATE
  SET ${kept(table, "name")}, updated_at = now()
  WHERE ${changes(table, "name")}`

// Ordered by event id, so two overlapping batches wait on each other instead of deadlocking.
const insertMessages = `WITH inserted AS (
  INSERT INTO message_events (workspace_id, occurred_at, user_ref, assistant_ref, project_ref, input_tokens,
                              output_tokens, event_id, model, feature, conversation_id)
  SELECT $1::uuid, e.occurred_at, u.id, a.id, p.id, e.input_tokens, e.output_tokens, e.event_id, e.model,
         e.feature, e.conversation_id
  FROM json_to_recordset($2::json) AS e(event_id text, occurred_at timestamptz, user_id text, assistant_id text,
                                        project_id text, model text, input_tokens integer, output_tokens integer,
                                        feature text, conversation_id text)
  JOIN workspace_users u ON u.workspace_id = $1::uuid AND u.external_id = e.user_id
  LEFT JOIN workspace_assistants a ON a.workspace_id = $1::uuid AND a.external_id = e.assistant_id
  LEFT JOIN workspace_projects p ON p.workspace_id = $1::uuid AND p.external_id = e.project_id
  ORDER BY e.event_id
  ON CONFLICT (workspace_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT count(*)::integer AS inserted FROM inserted`

const insertRuns = `WITH inserted AS (
  INSERT INTO workflow_runs (workspace_id, started_at, finished_at, workflow_ref, user_ref, project_ref, event_id,
                             status)
  SELECT $1::uuid, e.started_at, e.finished_at, w.id, u.id, p.id, e.event_id, e.status
  FROM json_to_recordset($2::json) AS e(event_id text, started_at timestamptz, finished_at timestamptz,
                                        workflow_id text, user_id text, project_id text, status text)
  JOIN workspace_workflows w ON w.workspace_id = $1::uuid AND w.external_id = e.workflow_id
  LEFT JOIN workspace_users u ON u.workspace_id = $1::uuid AND u.external_id = e.user_id
  LEFT JOIN workspace_projects p ON p.workspace_id = $1::uuid AND p.external_id = e.project_id
  ORDER BY e.event_id
  ON CONFLICT (workspace_id, event_id) DO NOTHING
  RETURNING 1
)
SELECT count(*)::integer AS inserted FROM inserted`
