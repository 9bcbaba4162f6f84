import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { call, type RunningApp, testAdminToken } from "./app"

/** Builders of platform activity events in the wire shape of POST /admin/workspaces/{id}/events. */
export const message = (
  id: string,
  occurredAt: string,
  fields: Partial<{
    user: { id: string; email?: string; name?: string }
    assistant: { id: string; name: string }
    project: { id: string; name: string }
    model: string
    inputTokens: number
    outputTokens: number
    feature: string
    conversationId: string
  }> = {}
) => ({
  type: "message" as const,
  id,
  occurredAt,
  user: { id: "u1", email: "ann@example.com", name: "Ann" },
  model: "chatgen-4o",
  inputTokens: 10,
  outputTokens: 20,
  ...fields
})

export const workflowRun = (
  id: string,
  startedAt: string,
  durationMs: number,
  fields: Partial<{
    workflow: { id: string; name: string }
    status: "succeeded" | "failed"
    user: { id: string; email?: string; name?: string }
    project: { id: string; name: string }
  }> = {}
) => ({
  type: "workflow_run" as const,
  id,
  workflow: { id: "w1", name: "Nightly" },
  startedAt,
  finishedAt: new Date(Date.parse(startedAt) + durationMs).toISOString(),
  status: "succeeded" as const,
  ...fields
})

export const ingest = async (app: RunningApp, workspaceId: string, events: ReadonlyArray<unknown>) => {
  const answer = await call(app, "POST", `/admin/workspaces/${workspaceId}/events`, { token: testAdminToken, body: { events } })
  if (answer.status !== 200) throw new Error(`ingestion failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body as { accepted: number; duplicates: number }
}

export const datePoint = (date: string, timezone: string) => ({ date, timezone })

/** Runs an export; on success also downloads the file and splits it into lines (CRLF). */
export const runExport = async (
  app: RunningApp,
  key: string,
  kind: string,
  body: unknown
): Promise<{ status: number; body: any; csv?: string; lines?: Array<string> }> => {
  const answer = await call(app, "POST", `/export/${kind}`, { token: key, body })
  if (answer.status !== 200) return answer
  const download = await fetch(answer.body.data.downloadUrl)
  if (download.status !== 200) throw new Error(`download failed: ${download.status} ${await download.text()}`)
  const csv = await download.text()
  return { ...answer, csv, lines: csv.split("\r\n").slice(0, -1) }
}

/** The cells of a CSV line without quoted commas (enough for the tests' data). */
export const cells = (line: string): Array<string> => line.split(",")

/** Runs one query against the app's database (assertions on what the service stored, or rows to set up). */
export const dbQuery = <Row extends object>(app: RunningApp, text: string, params: ReadonlyArray<unknown> = []) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(text, params)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(app.env.DATABASE_URL!), maxConnections: 1 })),
      Effect.scoped
    )
  )
