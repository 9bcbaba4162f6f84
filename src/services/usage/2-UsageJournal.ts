import { Context, Data, type Duration, Effect, Layer, Option, Runtime, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import { AppConfig } from "../../config"
import { Metrics } from "../../platform/Metrics"
import { forkSpacedRounds } from "../../platform/spacedRounds"

const fdatasync = promisify(fs.fdatasync)

/** The journal's directory cannot be used: the service does not start without its usage journal. */
export class JournalFailure extends Data.TaggedError("JournalFailure")<{
  readonly directory: string
  readonly cause: unknown
}> {}

export interface UsageJournalOptions {
  readonly directory: string
  /** Longest time a written line waits for fdatasync (the durability window against power loss). */
  readonly syncEvery: Duration.DurationInput
  /** A segment grows to about this size, then a new one is begun. */
  readonly segmentBytes: number
  /** First wait before the disk is tried again after it refused a write; doubled up to `retryAtMost`. */
  readonly retryFirst?: Duration.DurationInput
  readonly retryAtMost?: Duration.DurationInput
  /** While nothing is appended, the folder is checked this often (a file made, written and removed). */
  readonly watchEvery?: Duration.DurationInput
}

export const defaultJournalOptions = (dataDir: string): UsageJournalOptions => ({
  directory: path.join(dataDir, "usage-journal"),
  syncEvery: "50 millis",
  segmentBytes: 4 * 1024 * 1024
})

/** Lines of one segment read back from disk, to be written to the ledger again. */
export interface ReloadedSegment {
  readonly segment: number
  readonly lines: ReadonlyArray<string>
}

/**
 * Whether records can be made durable now: `ok` (lines reach the disk), `failing` (the disk refuses
 * them: records wait in memory only), `absent` (no journal at all: unit tests of other services).
 */
export type JournalHealth = "ok" | "failing" | "absent"

/**
 * The local, append-only journal of usage records (DESIGN.md, "Durability of usage records"). A
 * record's line is written (to the file, so it survives the process being killed) before the record
 * is queued for the database, and synced to disk in groups. The journal is a sequence of segment
 * files; a segment is removed once every record in it is in the ledger (`committed`).
 *
 * It also holds what memory does not: a segment marked `spilled` has records that are only on disk
 * (the memory queue was full, or the process restarted); `reload` reads the oldest such segment
 * back whole, and the recorder writes its records again (the ledger ignores those already in it).
 *
 * When the disk refuses a write (full, read-only, gone), the journal is `failing`: appends answer
 * none at once without touching the disk, and one background fiber tries the same segment again
 * with backoff until the disk takes a probe write and its sync; then the journal is `ok` again.
 * While idle, the folder is checked every few seconds, so that its health is known before the next
 * record needs it.
 */
export class UsageJournal extends Context.Tag("UsageJournal")<UsageJournal, {
  /**
   * Appends one line, synchronously: the segment it went to, or none when the disk refuses it (logged once,
   * in the background). A plain function: it runs for every forwarded request.
   */
  readonly append: (line: string) => Option.Option<number>
  /** `count` records of `segment` are in the ledger (or its dead-letter table). */
  readonly committed: (segment: number, count: number) => Effect.Effect<void>
  /** Records of `segment` were not kept in memory: they must be read back from disk. */
  readonly spill: (segment: number) => Effect.Effect<void>
  /** The oldest segment with records only on disk, read back; none when there is no such segment. */
  readonly reload: Effect.Effect<Option.Option<ReloadedSegment>>
  /** Whether some segment has records only on disk (`reload` would read one back); plain, for a loop's idle check. */
  readonly anySpilled: () => boolean
  /** Segments on disk (tests, metrics). */
  readonly segments: Effect.Effect<number>
  readonly health: Effect.Effect<JournalHealth>
  /** Records on disk not yet known to be in the ledger (those of an earlier run counted by their lines). */
  readonly waiting: Effect.Effect<number>
}>() {
  static readonly layerWith = (options: UsageJournalOptions) =>
    Layer.scoped(UsageJournal, Effect.map(makeJournal(options), ({ journal }) => journal))

  /** In DATA_DIR/usage-journal, with the gauge `wsapi_usage_journal_writable`. */
  static readonly layer = Layer.scoped(
    UsageJournal,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const metrics = yield* Metrics
      const { journal, writable } = yield* makeJournal(defaultJournalOptions(config.dataDir))
      yield* metrics.gauge(
        "wsapi_usage_journal_writable",
        "1 while the usage journal takes records; 0 while the disk refuses them (new records then wait in memory only).",
        () => (writable() ? 1 : 0)
      )
      return journal
    })
  )

  /** No journal: records live in memory only (unit tests of other services). */
  static readonly none = Layer.succeed(UsageJournal, {
    append: () => Option.none(),
    committed: () => Effect.void,
    spill: () => Effect.void,
    reload: Effect.succeed(Option.none()),
    anySpilled: () => false,
    segments: Effect.succeed(0),
    health: Effect.succeed<JournalHealth>("absent"),
    waiting: Effect.succeed(0)
  })
}

interface Segment {
  readonly id: number
  /** `append`'s answer for this segment, made once. */
  readonly answer: Option.Option<number>
  readonly file: string
  /** Records written to it and not yet known to be in the ledger. */
  outstanding: number
  /** Some of its records are only on disk. */
  spilled: boolean
  /** Left by an earlier run and not read back yet: its records are not counted in `outstanding`. */
  unread: boolean
}

const segmentName = /^segment-(\d{12})\.jsonl$/
const fileOf = (directory: string, id: number) => path.join(directory, `segment-${String(id).padStart(12, "0")}.jsonl`)

/** The probe's size: a line that fits in a block already allocated would prove nothing on a full disk. */
const probeBytes = Buffer.alloc(64 * 1024, "\n")

/** Writes `length` bytes of the buffer (a write may take part of it, as on a disk about to be full). */
const writeFully = (fd: number, bytes: Buffer, length = bytes.length) => {
  for (let offset = 0; offset < length;) offset += fs.writeSync(fd, bytes, offset, length - offset)
}

/**
 * Where a line is encoded before its write: one buffer for the process (writes are synchronous), so a record's
 * line costs no buffer of its own. A line that might not fit (3 bytes a UTF-16 unit at most) gets its own.
 */
const scratch = Buffer.allocUnsafe(16 * 1024)

const linesIn = (file: string): number => {
  try {
    const text = fs.readFileSync(file, "utf8")
    return text.split("\n").filter((line) => line.length > 0).length
  } catch {
    return 0
  }
}

const makeJournal = (options: UsageJournalOptions) =>
  Effect.gen(function*() {
    const { directory } = options
    const scope = yield* Effect.scope
    const existing = yield* Effect.try({
      try: () => {
        fs.mkdirSync(directory, { recursive: true })
        fs.accessSync(directory, fs.constants.W_OK)
        return fs.readdirSync(directory).flatMap((name) => {
          const match = segmentName.exec(name)
          return match ? [Number(match[1])] : []
        }).sort((a, b) => a - b)
      },
      catch: (cause) => new JournalFailure({ directory, cause })
    })
    // Segments left by an earlier run are read back whole: whatever of them is already in the
    // ledger is ignored there.
    const segments = new Map<number, Segment>(
      existing.map((id) => [id, { id, answer: Option.some(id), file: fileOf(directory, id), outstanding: 0, spilled: true, unread: true }])
    )
    if (existing.length > 0) {
      yield* Effect.logInfo("usage journal found from an earlier run: its records will be written to the ledger").pipe(
        Effect.annotateLogs({ segments: existing.length, directory })
      )
    }
    let nextId = (existing.at(-1) ?? 0) + 1
    let current: { segment: Segment; fd: number; bytes: number } | undefined
    // Written but not yet synced; descriptors to close once synced (never closed under a running sync).
    let dirty = false
    let newFile = false
    const toClose: Array<{ fd: number; dirty: boolean }> = []
    let failing = false
    // A line was written since the last idle check.
    let appended = false

    const close = () => {
      if (current === undefined) return
      toClose.push({ fd: current.fd, dirty })
      dirty = false
      current = undefined
    }

    const remove = (segment: Segment) => {
      if (current?.segment === segment) close()
      segments.delete(segment.id)
      try {
        fs.unlinkSync(segment.file)
      } catch {
        // Already gone: nothing to keep.
      }
    }

    /** The segment being written, made when there is none. Its id is taken only once its file exists. */
    const target = () => {
      if (current !== undefined) return current
      const segment: Segment = { id: nextId, answer: Option.some(nextId), file: fileOf(directory, nextId), outstanding: 0, spilled: false, unread: false }
      const fd = fs.openSync(segment.file, "a")
      nextId++
      segments.set(segment.id, segment)
      current = { segment, fd, bytes: 0 }
      newFile = true
      return current
    }

    /** Cuts what a failed write left of a line, so that the next line begins on its own. */
    const undoPartial = () => {
      if (current === undefined) return
      try {
        fs.ftruncateSync(current.fd, current.bytes)
      } catch {
        // A cut line is skipped when read back, and the next write begins with a probe's newlines.
      }
    }

    const probeFile = path.join(directory, ".probe")

    /**
     * The segment being written is tried again (a write of a probe and its sync, then the probe is cut
     * again); with none open, a probe file beside the segments, removed again. Never a file per record.
     */
    const probe = Effect.suspend(() => {
      try {
        if (current !== undefined) {
          writeFully(current.fd, probeBytes)
          fs.fdatasyncSync(current.fd)
          fs.ftruncateSync(current.fd, current.bytes)
        } else {
          const fd = fs.openSync(probeFile, "w")
          try {
            writeFully(fd, probeBytes)
            fs.fdatasyncSync(fd)
          } finally {
            fs.closeSync(fd)
            fs.rmSync(probeFile, { force: true })
          }
        }
        return Effect.void
      } catch (cause) {
        undoPartial()
        return Effect.fail(cause)
      }
    })
    const retrySchedule = Schedule.exponential(options.retryFirst ?? "100 millis").pipe(
      Schedule.union(Schedule.spaced(options.retryAtMost ?? "5 seconds"))
    )
    const recover = Effect.retry(probe, retrySchedule).pipe(
      Effect.zipRight(Effect.sync(() => void (failing = false))),
      Effect.zipRight(Effect.logInfo("usage journal writable again").pipe(Effect.annotateLogs({ directory })))
    )

    /** Said once, when the journal starts failing; then the disk is tried again in the background until it takes one. */
    const announceFailing = (cause: unknown): Effect.Effect<void> =>
      Effect.logError("usage journal cannot be written: new records wait in memory only until it can").pipe(
        Effect.annotateLogs({ directory, cause: String(cause) }),
        Effect.zipRight(Effect.forkIn(recover, scope)),
        Effect.asVoid
      )

    /** The disk refused a write. */
    const startFailing = (cause: unknown): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (failing) return Effect.void
        failing = true
        return announceFailing(cause)
      })

    // The refusal's log line and the retries run in the background, under this layer's runtime.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())

    const append = (line: string): Option.Option<number> => {
      if (failing) return Option.none()
      try {
        if (current !== undefined && current.bytes >= options.segmentBytes) close()
        const into = target()
        let bytes = scratch
        let length: number
        if (line.length * 3 < scratch.length) {
          length = scratch.write(line, 0, "utf8")
          scratch[length++] = 0x0a
        } else {
          bytes = Buffer.from(line + "\n", "utf8")
          length = bytes.length
        }
        // A synchronous write: once it returns, the line is the kernel's and outlives this process.
        writeFully(into.fd, bytes, length)
        into.bytes += length
        into.segment.outstanding++
        dirty = true
        appended = true
        return into.segment.answer
      } catch (cause) {
        // Full, read-only or gone: the segment stays the one tried again.
        undoPartial()
        failing = true
        runFork(announceFailing(cause))
        return Option.none()
      }
    }

    const committed = (id: number, count: number) =>
      Effect.sync(() => {
        const segment = segments.get(id)
        if (segment === undefined) return
        segment.outstanding = Math.max(0, segment.outstanding - count)
        // A drained segment is removed, the one being written too (the next line begins a new one).
        if (segment.outstanding === 0 && !segment.spilled) remove(segment)
      })

    const spill = (id: number) =>
      Effect.sync(() => {
        const segment = segments.get(id)
        if (segment !== undefined) segment.spilled = true
      })

    const reload: Effect.Effect<Option.Option<ReloadedSegment>> = Effect.suspend(() => {
      const oldest = [...segments.values()].filter((s) => s.spilled).sort((a, b) => a.id - b.id)[0]
      if (oldest === undefined) return Effect.succeed(Option.none())
      // Read back whole, so nothing more may go into it.
      if (current?.segment === oldest) close()
      let text: string
      try {
        text = fs.readFileSync(oldest.file, "utf8")
      } catch (cause) {
        return Effect.as(
          Effect.logError("usage journal segment cannot be read; retried later").pipe(
            Effect.annotateLogs({ file: oldest.file, cause: String(cause) })
          ),
          Option.none()
        )
      }
      const lines = text.split("\n").filter((line) => line.length > 0)
      oldest.spilled = false
      oldest.unread = false
      oldest.outstanding = lines.length
      if (lines.length === 0) {
        remove(oldest)
        return reload
      }
      return Effect.succeed(Option.some({ segment: oldest.id, lines }))
    })

    // Group sync: everything written since the last round goes to disk in one fdatasync per file.
    const syncRound = Effect.promise(async () => {
      const closing = toClose.splice(0, toClose.length)
      const fd = current?.fd
      const syncCurrent = dirty && fd !== undefined
      dirty = false
      const createdFile = newFile
      newFile = false
      const failures: Array<string> = []
      for (const target of [...closing.filter((c) => c.dirty).map((c) => c.fd), ...(syncCurrent ? [fd] : [])]) {
        await fdatasync(target).catch((cause: unknown) => void failures.push(String(cause)))
      }
      if (createdFile) {
        // The new file's name must reach the disk too.
        await fs.promises.open(directory, "r").then((dir) => dir.sync().finally(() => dir.close())).catch(() => undefined)
      }
      for (const c of closing) {
        try {
          fs.closeSync(c.fd)
        } catch {
          // Already closed.
        }
      }
      return failures
    }).pipe(
      Effect.flatMap((failures) =>
        failures.length === 0
          ? Effect.void
          // Some filesystems refuse at sync what they took at write (space allocated late).
          : Effect.zipRight(
            Effect.logError("usage journal sync failed").pipe(Effect.annotateLogs({ cause: failures[0] })),
            startFailing(failures[0])
          )
      )
    )

    // A round is never left half done: interrupted, the fiber waits for its syncs and closes.
    /**
     * The idle check: a small file made, written and removed (never synced, so it costs the disk
     * nothing): a folder made read-only or a full disk is noticed without waiting for a record.
     */
    const idleCheck = Effect.suspend(() => {
      if (failing || appended) {
        appended = false
        return Effect.void
      }
      try {
        fs.writeFileSync(probeFile, probeBytes.subarray(0, 4096))
        fs.rmSync(probeFile, { force: true })
        return Effect.void
      } catch (cause) {
        try {
          fs.rmSync(probeFile, { force: true })
        } catch {
          // Removed by the next check that succeeds.
        }
        return startFailing(cause)
      }
    })
    yield* Effect.forkScoped(Effect.repeat(idleCheck, Schedule.spaced(options.watchEvery ?? "5 seconds")))

    // A round with nothing written, closed or created since the last is skipped without entering the runtime.
    const stopSyncing = yield* forkSpacedRounds(
      Effect.uninterruptible(syncRound),
      options.syncEvery,
      () => dirty || newFile || toClose.length > 0
    )
    // Last: the periodic sync stops, then everything written is synced and closed.
    yield* Effect.addFinalizer(() => stopSyncing.pipe(Effect.zipRight(Effect.sync(close)), Effect.zipRight(syncRound)))

    const journal: typeof UsageJournal.Service = {
      append,
      committed,
      spill,
      reload,
      anySpilled: () => {
        for (const segment of segments.values()) if (segment.spilled) return true
        return false
      },
      segments: Effect.sync(() => segments.size),
      health: Effect.sync(() => (failing ? "failing" : "ok")),
      waiting: Effect.sync(() =>
        [...segments.values()].reduce((sum, segment) => sum + (segment.unread ? linesIn(segment.file) : segment.outstanding), 0)
      )
    }
    return { journal, writable: () => !failing }
  })
