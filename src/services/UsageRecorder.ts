import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Ref, Schedule } from "effect"

/** One forwarded request, as the ledger keeps it. */
export interface ApiRequestRecord {
  readonly workspaceId: string
  readonly keyId: string
  readonly endpoint: "chat_completions" | "embeddings" | "messages" | "fim_completions"
  readonly provider: "provider_a" | "provider_b" | "provider_c"
  readonly region: string
  readonly model: string
  /** The status the client got (a stream that failed midway keeps its 200). */
  readonly status: number
  readonly outcome: "completed" | "failed" | "cancelled"
  readonly stream: boolean
  readonly inputTokens: number
  readonly outputTokens: number
  readonly costUsd: number
  readonly latencyMs: number
  readonly requestId: string | undefined
  readonly createdAt: Date
}

export interface UsageRecorderOptions {
  /** Records held at most while the database is away; beyond it the oldest are dropped, with a log line. */
  readonly capacity: number
  readonly batchSize: number
  readonly flushEvery: Duration.DurationInput
}

export const defaultRecorderOptions: UsageRecorderOptions = { capacity: 100_000, batchSize: 1_000, flushEvery: "500 millis" }

/**
 * Records forwarded requests off the request path: `record` only appends to a bounded buffer; a
 * background fiber writes batches in one statement each, keeps them when the database is away and
 * tries again, and the last records are written on shutdown.
 */
export class UsageRecorder extends Context.Tag("UsageRecorder")<UsageRecorder, {
  readonly record: (record: ApiRequestRecord) => Effect.Effect<void>
  /** Writes everything buffered now (tests, shutdown). */
  readonly flush: Effect.Effect<void>
}>() {
  static readonly layerWith = (options: UsageRecorderOptions) =>
    Layer.scoped(
      UsageRecorder,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Appended on every forwarded request, so a plain array owned by this service, not a copied value.
        const buffer: Array<ApiRequestRecord> = []
        const dropped = yield* Ref.make(0)

        const insert = (batch: ReadonlyArray<ApiRequestRecord>) => {
          const rows = JSON.stringify(batch.map((r) => ({
            workspace_id: r.workspaceId,
            key_id: r.keyId,
            endpoint: r.endpoint,
            provider: r.provider,
            region: r.region,
            model: r.model,
            status: r.status,
            outcome: r.outcome,
            stream: r.stream,
            input_tokens: r.inputTokens,
            output_tokens: r.outputTokens,
            cost_usd: r.costUsd,
            latency_ms: Math.round(r.latencyMs),
            request_id: r.requestId ?? null,
            created_at: r.createdAt.toISOString()
          })))
          return sql`
            INSERT INTO api_requests (workspace_id, key_id, endpoint, provider, region, model, status, outcome, stream,
                                      input_tokens, output_tokens, cost_usd, latency_ms, request_id, created_at)
            SELECT workspace_id, key_id, endpoint, provider, region, model, status, outcome, stream,
                   input_tokens, output_tokens, cost_usd, latency_ms, request_id, created_at
            FROM jsonb_to_recordset(${rows}::jsonb) AS r(
              workspace_id uuid, key_id uuid, endpoint text, provider text, region text, model text, status smallint,
              outcome text, stream boolean, input_tokens integer, output_tokens integer, cost_usd numeric,
              latency_ms integer, request_id text, created_at timestamptz)`
        }

        /** Writes the oldest batch; on failure it stays at the front of the buffer for the next try. */
        const writeBatch = Effect.gen(function*() {
          const batch = buffer.slice(0, options.batchSize)
          if (batch.length === 0) return false
          yield* insert(batch)
          // Records appended meanwhile are behind the batch: only the batch leaves the front.
          buffer.splice(0, batch.length)
          return true
        })

        const writeAll: Effect.Effect<void, unknown> = Effect.flatMap(writeBatch, (wrote) => (wrote ? writeAll : Effect.void))

        const reportDrops = Effect.flatMap(Ref.getAndSet(dropped, 0), (count) =>
          count === 0
            ? Effect.void
            : Effect.logError("usage buffer full while the database is unavailable: oldest records dropped").pipe(
              Effect.annotateLogs({ dropped: count, capacity: options.capacity })
            ))

        // An outage is logged when it starts and when it ends, not at every retry.
        const failing = yield* Ref.make(false)
        const cycle = writeAll.pipe(
          Effect.zipRight(
            Effect.flatMap(Ref.getAndSet(failing, false), (was) =>
              was ? Effect.logInfo("usage records written again after an outage") : Effect.void)
          ),
          Effect.catchAll((cause) =>
            Effect.flatMap(Ref.getAndSet(failing, true), (was) =>
              was
                ? Effect.void
                : Effect.logWarning("usage records cannot be written; kept in memory and retried").pipe(
                  Effect.annotateLogs({ buffered: buffer.length, cause: String(cause) })
                ))
          ),
          Effect.zipRight(reportDrops)
        )
        yield* Effect.forkScoped(Effect.repeat(cycle, Schedule.spaced(options.flushEvery)))
        // On shutdown: a few tries to write what is left before the pool closes.
        yield* Effect.addFinalizer(() =>
          writeAll.pipe(
            Effect.retry(Schedule.intersect(Schedule.recurs(5), Schedule.spaced("500 millis"))),
            Effect.catchAll((cause) =>
              Effect.logError("usage records lost at shutdown").pipe(
                Effect.annotateLogs({ records: buffer.length, cause: String(cause) })
              )
            )
          )
        )

        return {
          record: (record) =>
            Effect.suspend(() => {
              buffer.push(record)
              if (buffer.length <= options.capacity) return Effect.void
              const overflow = buffer.length - options.capacity
              buffer.splice(0, overflow)
              return Ref.update(dropped, (n) => n + overflow)
            }),
          flush: Effect.orElse(writeAll, () => Effect.void)
        }
      })
    )

  static readonly layer = UsageRecorder.layerWith(defaultRecorderOptions)
}
