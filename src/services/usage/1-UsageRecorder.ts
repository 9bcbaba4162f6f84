import { Context, Deferred, Duration, Effect, Either, Fiber, Layer, Option, Ref, Schedule, Schema } from "effect"
import { AppConfig } from "../../config"
import { UsageNotDurable } from "../../domain/refusals"
import type { ProviderId } from "../../domain/providerId"
import { ProviderIdSchema } from "../../domain/providerIdSchema"
import type { StorageFailure } from "../../platform/StorageFailure"
import { Metrics } from "../../platform/Metrics"
import { forkSpacedRounds } from "../../platform/spacedRounds"
import { UsageJournal } from "./2-UsageJournal"
import type { EndpointRecord } from "../../providers/forwardedEndpoint"
import { type ApiRequestRow, UsageLedger } from "./3-UsageLedger/index"

/**
 * One forwarded request, as the ledger keeps it (UsageLedger's row), with the endpoint and provider narrowed
 * to the service's own names.
 */
export interface ApiRequestRecord extends ApiRequestRow {
  readonly endpoint: EndpointRecord
  readonly provider: ProviderId
}

/** A record as the journal holds it: one JSON line. */
const JournalLine = Schema.parseJson(Schema.Struct({
  recordId: Schema.String,
  workspaceId: Schema.String,
  keyId: Schema.String,
  endpoint: Schema.Literal("chat_completions", "embeddings", "messages", "fim_completions", "responses"),
  provider: ProviderIdSchema,
  region: Schema.String,
  model: Schema.String,
  status: Schema.Number,
  outcome: Schema.Literal("completed", "failed", "cancelled"),
  stream: Schema.Boolean,
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  costUsd: Schema.Number,
  clamped: Schema.Boolean,
  latencyMs: Schema.Number,
  requestId: Schema.optionalWith(Schema.String, { as: "Option" }),
  createdAt: Schema.Date,
  // Journals written before provider keys existed have no byok: those requests went with the service's key.
  byok: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  // Journals written before deployments were recorded have none (JSON.stringify leaves an undefined one out too).
  deployment: Schema.optionalWith(Schema.UndefinedOr(Schema.String), { default: () => undefined })
}))
const decodeLine = Schema.decodeEither(JournalLine)

/**
 * The line JournalLine decodes (a missing requestId is none; the date as ISO text). Plain
 * JSON.stringify: this runs for every forwarded request, the decoder only when a journal is read back.
 */
const toLine = (record: ApiRequestRecord): string => JSON.stringify(record)

export interface UsageRecorderOptions {
  /**
   * Records held in memory at most; beyond it they are only in the journal and read back from it
   * once memory has room. Without a journal (UsageJournal.none) the oldest are dropped, with a log line.
   */
  readonly capacity: number
  readonly batchSize: number
  readonly flushEvery: Duration.DurationInput
  /**
   * How long shutdown tries to write what is queued before it leaves it to the journal (the next
   * start writes it): a stalled ledger must not hold the process. Five seconds unless given.
   */
  readonly shutdownFlush?: Duration.DurationInput
  /** USAGE_JOURNAL_REQUIRED: billable requests are refused while the journal cannot be written. */
  readonly journalRequired?: boolean
}

const defaultShutdownFlush: Duration.DurationInput = "5 seconds"

export const defaultRecorderOptions: UsageRecorderOptions = { capacity: 100_000, batchSize: 1_000, flushEvery: "500 millis" }

interface Entry {
  readonly record: ApiRequestRecord
  /**
   * The journal segment that holds the record; none while it is in memory only (set once the
   * journal takes it after all, by the writer only).
   */
  segment: Option.Option<number>
}

/**
 * Why the ledger could not be written, for the outage log lines: `<code>: <message>` of the
 * underlying error (a database error's SQLSTATE), `?` when it has no code.
 */
const failureText = (failure: StorageFailure): string => {
  const cause: unknown = failure.cause
  const inner: unknown = cause instanceof Error && cause.cause !== undefined ? cause.cause : cause
  const code = typeof inner === "object" && inner !== null && "code" in inner && typeof inner.code === "string" ? inner.code : "?"
  return `${code}: ${inner instanceof Error ? inner.message : String(inner)}`.slice(0, 2_000)
}

/**
 * Records forwarded requests off the request path. `record` writes the record to the local journal
 * (UsageJournal), then queues it; one background fiber at a time writes the queue in batches, each
 * one idempotent (ON CONFLICT on the record id), and tells the journal what is in the ledger so that
 * drained segments are removed. A batch the database refuses for its data is split until the bad
 * record is alone, and that one goes to the dead-letter table with the error: it never blocks the
 * others. While the database is away everything stays queued (beyond the memory capacity, in the
 * journal only) and is written when it is back. Records the journal could not take (its disk refused
 * them) are written to it once it can, before their batch goes to the ledger. On shutdown the periodic
 * flush is stopped first, then what is left is written for a few seconds at most; what still cannot
 * be is in the journal for the next start, and a log line says how many.
 */
export class UsageRecorder extends Context.Tag("UsageRecorder")<UsageRecorder, {
  readonly record: (record: ApiRequestRecord) => Effect.Effect<void>
  /** Writes everything queued now (tests, shutdown). */
  readonly flush: Effect.Effect<void>
  /** Records queued in memory, not yet in the ledger. */
  readonly pending: Effect.Effect<number>
  /**
   * Fails while a new record could not be made durable (the journal's disk refuses writes) and
   * USAGE_JOURNAL_REQUIRED asks billable requests to be refused then; succeeds otherwise.
   */
  readonly requireDurable: Effect.Effect<void, UsageNotDurable>
}>() {
  static readonly layerWith = (options: UsageRecorderOptions) =>
    Layer.scoped(
      UsageRecorder,
      Effect.gen(function*() {
        const ledger = yield* UsageLedger
        const journal = yield* UsageJournal
        const metrics = yield* Metrics
        // Appended on every forwarded request, so a plain array owned by this service, not a copied value.
        let queue: Array<Entry> = []
        const dropped = yield* Ref.make(0)
        // One writer at a time: the periodic flush, a test's flush and the shutdown flush never overlap.
        const writer = yield* Effect.makeSemaphore(1)
        // Some queued record is in memory only (the journal refused it): looked for once the journal takes lines again.
        let memoryOnly = false

        const insert = (batch: ReadonlyArray<Entry>) => ledger.insertRequests(batch.map(({ record }) => record))

        yield* metrics.gauge("wsapi_usage_records_pending", "Usage records queued in memory, not yet in the ledger.", () => queue.length)

        const deadLetter = (entry: Entry, reason: string) =>
          ledger.deadLetter(entry.record, toLine(entry.record), reason).pipe(
            Effect.tap(() => metrics.usageRecordsDeadLettered(1)),
            Effect.zipRight(
              Effect.logError("usage record refused by the ledger: kept in api_requests_dead_letter").pipe(
                Effect.annotateLogs({ recordId: entry.record.recordId, workspaceId: entry.record.workspaceId, error: reason })
              )
            )
          )

        /**
         * Writes a batch whole, or split in halves when the database refuses its data, down to the
         * single records that go to the dead letters. Fails only when the ledger is away (then
         * nothing is lost: the batch stays queued, and what was written is ignored next time).
         */
        const writeSplitting = (batch: ReadonlyArray<Entry>): Effect.Effect<void, StorageFailure> =>
          insert(batch).pipe(
            Effect.catchTag("RequestsRefused", ({ reason }) => {
              if (batch.length === 1) return deadLetter(batch[0]!, reason)
              const half = Math.ceil(batch.length / 2)
              return Effect.logWarning("usage batch refused by the ledger: split to isolate the bad record").pipe(
                Effect.annotateLogs({ records: batch.length, error: reason }),
                Effect.zipRight(writeSplitting(batch.slice(0, half))),
                Effect.zipRight(writeSplitting(batch.slice(half)))
              )
            })
          )

        /** Tells the journal which of its records are now in the ledger. */
        const release = (batch: ReadonlyArray<Entry>) => {
          const counts = new Map<number, number>()
          for (const entry of batch) {
            if (Option.isSome(entry.segment)) counts.set(entry.segment.value, (counts.get(entry.segment.value) ?? 0) + 1)
          }
          return Effect.forEach(counts, ([segment, count]) => journal.committed(segment, count), { discard: true })
        }

        /** Brings back the oldest segment whose records are only on disk, when memory has room for it. */
        const reloadSpilled = Effect.suspend(() => {
          if (queue.length > options.capacity / 2) return Effect.succeed(false)
          return Effect.flatMap(journal.reload, Option.match({
            onNone: () => Effect.succeed(false),
            onSome: ({ lines, segment }) =>
              Effect.gen(function*() {
                // Records of that segment still queued are replaced by its lines (the same records).
                queue = queue.filter((entry) => !(Option.isSome(entry.segment) && entry.segment.value === segment))
                let unreadable = 0
                for (const line of lines) {
                  const decoded = decodeLine(line)
                  if (Either.isLeft(decoded)) {
                    unreadable++
                    continue
                  }
                  const { requestId, ...record } = decoded.right
                  queue.push({ record: { ...record, requestId: Option.getOrUndefined(requestId) }, segment: Option.some(segment) })
                }
                if (unreadable > 0) {
                  // A line cut short by a crash while it was being written.
                  yield* Effect.logWarning("usage journal lines that cannot be read were skipped").pipe(
                    Effect.annotateLogs({ segment, lines: unreadable })
                  )
                  yield* journal.committed(segment, unreadable)
                }
                return true
              })
          }))
        })

        /** Writes the oldest batch; on failure it stays at the front of the queue for the next try. */
        const writeBatch = Effect.gen(function*() {
          if (queue.length === 0 && !(yield* reloadSpilled)) return false
          const batch = queue.slice(0, options.batchSize)
          if (batch.length === 0) return false
          // Once per batch, off the request path: its database statements are the span's children.
          yield* writeSplitting(batch).pipe(Effect.withSpan("usage.write", { attributes: { "wsapi.records": batch.length }, captureStackTrace: false }))
          // Records queued meanwhile are behind the batch; a reload only happens in this fiber.
          queue.splice(0, batch.length)
          yield* release(batch)
          if (queue.length < options.capacity / 2) yield* reloadSpilled
          return true
        })

        /**
         * Records kept in memory only while the journal's disk refused them are appended to it once it
         * takes lines again (oldest first; interrupted by a new refusal). Under the writer's permit, so
         * no batch holding them is being written meanwhile.
         */
        const journalMemoryOnly = Effect.gen(function*() {
          if (!memoryOnly || (yield* journal.health) !== "ok") return
          const waiting = queue.filter((entry) => Option.isNone(entry.segment))
          for (const [index, entry] of waiting.entries()) {
            const segment = journal.append(toLine(entry.record))
            if (Option.isNone(segment)) return
            entry.segment = segment
            if (index % 1_000 === 999) yield* Effect.yieldNow()
          }
          memoryOnly = queue.some((entry) => Option.isNone(entry.segment))
          if (waiting.length > 0) {
            yield* Effect.logInfo("usage records kept in memory only are in the journal now").pipe(
              Effect.annotateLogs({ records: waiting.length })
            )
          }
        })

        const writeLoop: Effect.Effect<void, StorageFailure> = Effect.flatMap(writeBatch, (wrote) => (wrote ? writeLoop : Effect.void))
        const writeAll = writer.withPermits(1)(Effect.zipRight(journalMemoryOnly, writeLoop))

        const reportDrops = Effect.flatMap(Ref.getAndSet(dropped, 0), (count) =>
          count === 0
            ? Effect.void
            : Effect.logError("usage queue full and no journal: oldest records dropped").pipe(
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
                : Effect.logWarning("usage records cannot be written; kept in the journal and retried").pipe(
                  Effect.annotateLogs({ queued: queue.length, cause: failureText(cause) })
                ))
          ),
          Effect.zipRight(reportDrops)
        )
        // Nothing queued and nothing to read back: the round would write nothing (a failure or a drop leaves records queued).
        const stopPeriodic = yield* forkSpacedRounds(cycle, options.flushEvery, () => queue.length > 0 || journal.anySpilled())

        /** What shutdown leaves behind, said in one line: the next start writes what is in the journal. */
        const reportLeft = (why: string) =>
          Effect.flatMap(journal.waiting, (journaled) => {
            const inMemoryOnly = queue.filter((entry) => Option.isNone(entry.segment)).length
            if (journaled === 0 && inMemoryOnly === 0) return Effect.void
            return Effect.logWarning("usage records not written to the ledger at shutdown: they wait in the journal for the next start").pipe(
              Effect.annotateLogs({ journaled, lostInMemoryOnly: inMemoryOnly, why })
            )
          })
        // On shutdown: the periodic flush is stopped (a write under way is cancelled), then what is left
        // is written, with retries, for `shutdownFlush` at most. Past it the attempt is interrupted in
        // the background, not awaited (its records are in the journal; what it wrote is ignored when
        // they are written again). A race of two forked fibers on one Deferred: a finalizer cannot be
        // interrupted, so a timeout (which interrupts the loser and waits for it) could not cut it.
        const lastFlush = stopPeriodic.pipe(
          Effect.zipRight(writeAll),
          Effect.retry(Schedule.intersect(Schedule.recurs(5), Schedule.spaced("500 millis")))
        )
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            const outcome = yield* Deferred.make<string | undefined>()
            const flushing = yield* Effect.forkDaemon(lastFlush.pipe(
              Effect.match({ onFailure: failureText, onSuccess: () => undefined }),
              Effect.flatMap((why) => Deferred.succeed(outcome, why))
            ))
            const deadline = yield* Effect.forkDaemon(
              Effect.sleep(options.shutdownFlush ?? defaultShutdownFlush).pipe(
                Effect.zipRight(Deferred.succeed(outcome, "the ledger did not answer in time"))
              )
            )
            const why = yield* Deferred.await(outcome)
            yield* Fiber.interruptFork(deadline)
            yield* Fiber.interruptFork(flushing)
            yield* reportLeft(why ?? "records came after the last write")
          })
        )

        return {
          // One operation a record: the journal's append is a plain synchronous call.
          record: (record) =>
            Effect.suspend(() => {
              const segment = journal.append(toLine(record))
              if (Option.isNone(segment)) memoryOnly = true
              if (queue.length < options.capacity) {
                queue.push({ record, segment })
                return Effect.void
              }
              // Memory is full: the journal keeps the record until there is room for its segment.
              if (Option.isSome(segment)) return journal.spill(segment.value)
              queue.push({ record, segment })
              const overflow = queue.length - options.capacity
              queue.splice(0, overflow)
              metrics.usageRecordsDropped(overflow)
              return Ref.update(dropped, (n) => n + overflow)
            }),
          flush: Effect.orElse(writeAll, () => Effect.void),
          pending: Effect.sync(() => queue.length),
          requireDurable: options.journalRequired === true
            ? Effect.flatMap(journal.health, (health) => (health === "failing" ? Effect.fail(new UsageNotDurable()) : Effect.void))
            : Effect.void
        }
      })
    )

  /** With USAGE_JOURNAL_REQUIRED from the configuration. */
  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) => UsageRecorder.layerWith({ ...defaultRecorderOptions, journalRequired: config.usageJournalRequired }))
  )
}
