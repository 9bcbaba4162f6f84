import type { ApiRequestRow, ExportRun } from "./contract"

/**
 * What the in-memory ledger holds, the shape of the PostgreSQL tables it stands in for. Dimension
 * rows carry a `ref` drawn in the order the workspace first reported them (the tables' identity
 * keys), which the exports order entities by.
 */
export interface MemoryDimension {
  readonly ref: number
  readonly externalId: string
  /** Field values (`email`, `name`) and the time (ms) of the event that carried each. */
  readonly values: Record<string, string | null>
  readonly at: Record<string, number | null>
}

export interface MemoryMessage {
  readonly eventId: string
  readonly occurredAt: number
  readonly userRef: number
  readonly assistantRef: number | null
  readonly projectRef: number | null
  readonly model: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly feature: string | null
  readonly conversationId: string | null
}

export interface MemoryRun {
  readonly eventId: string
  readonly startedAt: number
  readonly finishedAt: number
  readonly workflowRef: number
  readonly userRef: number | null
  readonly projectRef: number | null
  readonly status: string
}

export type DimensionTable = "users" | "assistants" | "projects" | "workflows"

export interface MemoryWorkspaceLedger {
  readonly dimensions: { readonly [T in DimensionTable]: Map<string, MemoryDimension> }
  /** By event id, in insertion order. */
  readonly messages: Map<string, MemoryMessage>
  readonly runs: Map<string, MemoryRun>
  /** By record id, in insertion order; latency already rounded as the column keeps it. */
  readonly requests: Map<string, ApiRequestRow>
}

export interface MemoryDeadLetter {
  readonly recordId: string
  readonly workspaceId: string
  readonly record: string
  readonly error: string
}

export interface MemoryUsageStore {
  readonly workspaces: Map<string, MemoryWorkspaceLedger>
  readonly deadLetters: Map<string, MemoryDeadLetter>
  readonly exportRuns: Array<ExportRun>
  /** The next surrogate key of each dimension table (shared by all workspaces, as identity columns are). */
  readonly nextRef: { [T in DimensionTable]: number }
}

export const makeMemoryUsageStore = (): MemoryUsageStore => ({
  workspaces: new Map(),
  deadLetters: new Map(),
  exportRuns: [],
  nextRef: { users: 1, assistants: 1, projects: 1, workflows: 1 }
})

export const workspaceLedger = (store: MemoryUsageStore, workspaceId: string): MemoryWorkspaceLedger => {
  const existing = store.workspaces.get(workspaceId)
  if (existing !== undefined) return existing
  const created: MemoryWorkspaceLedger = {
    dimensions: { users: new Map(), assistants: new Map(), projects: new Map(), workflows: new Map() },
    messages: new Map(),
    runs: new Map(),
    requests: new Map()
  }
  store.workspaces.set(workspaceId, created)
  return created
}
