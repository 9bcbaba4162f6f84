import type { EventNamedEntity, EventUser, UsageEvent } from "../../../domain/usageEvent"

// -------------------------------------------------------------------------------------------------
// A batch as both backings store it: one list per table, dimensions deduplicated, each field with
// the time of the newest event in the batch that carried it.

export interface MessageRow {
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

export interface RunRow {
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
/** A dimension row: its external id, each field, and `<field>_at` (ISO time of the event that carried it, or null). */
export type DimensionRow = { readonly external_id: string } & Record<string, string | null>

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
    rows: (): ReadonlyArray<DimensionRow> =>
      [...known.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([externalId, entry]) => {
          const row: Record<string, string | null> = { external_id: externalId, ...entry.values }
          for (const field of Object.keys(entry.values)) {
            const at = entry.at[field]
            row[`${field}_at`] = at === undefined ? null : new Date(at).toISOString()
          }
          return row as DimensionRow
        })
  }
}

export const splitBatch = (events: ReadonlyArray<UsageEvent>) => {
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

