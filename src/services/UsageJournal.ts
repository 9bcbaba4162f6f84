import { Context, Data, type Duration, Effect, Fiber, Layer, Option, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import { AppConfig } from "../config"

const fdatasync = promisify(fs.fdatasync)

/** The journal's directory cannot be used: the service does not start without its usage journal. */
export class JournalUnavailable extends Data.TaggedError("JournalUnavailable")<{
  readonly directory: string
  readonly cause: unknown
}> {}

export interface UsageJournalOptions {
  readonly directory: string
  /** Longest time a written line waits for fdatasync (the durability window against power loss). */
  readonly syncEvery: Duration.DurationInput
  /** A segment grows to about this size, then a new one is begun. */
  readonly segmentBytes: number
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
 * The local, append-only journal of usage records (DESIGN.md, "Durability of usage records"). A
 * record's line is written (to the file, so it survives the process being killed) before the record
 * is queued for the database, and synced to disk in groups. The journal is a sequence of segment
 * files; a segment is removed once every record in it is in the ledger (`committed`).
 *
 * It also holds what memory does not: a segment marked `spilled` has records that are only on disk
 * (the memory queue was full, or the process restarted); `reload` reads the oldest such segment
 * back whole, and the recorder writes its records again (the ledger ignores those already in it).
 */
export class UsageJournal extends Context.Tag("UsageJournal")<UsageJournal, {
  /** Appends one line; the segment it went to, or none when the disk refused it (logged). */
  readonly append: (line: string) => Effect.Effect<Option.Option<number>>
  /** `count` records of `segment` are in the ledger (or its dead-letter table). */
  readonly committed: (segment: number, count: number) => Effect.Effect<void>
  /** Records of `segment` were not kept in memory: they must be read back from disk. */
  readonly spill: (segment: number) => Effect.Effect<void>
  /** The oldest segment with records only on disk, read back; none when there is no such segment. */
  readonly reload: Effect.Effect<Option.Option<ReloadedSegment>>
  /** Segments on disk (tests, metrics). */
  readonly segments: Effect.Effect<number>
}>() {
  static readonly layerWith = (options: UsageJournalOptions) =>
    Layer.scoped(UsageJournal, makeJournal(options))

  /** In DATA_DIR/usage-journal. */
  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) => UsageJournal.layerWith(defaultJournalOptions(config.dataDir)))
  )

  /** No journal: records live in memory only (unit tests of other services). */
  static readonly none = Layer.succeed(UsageJournal, {
    append: () => Effect.succeed(Option.none()),
    committed: () => Effect.void,
    spill: () => Effect.void,
    reload: Effect.succeed(Option.none()),
    segments: Effect.succeed(0)
  })
}

interface Segment {
  readonly id: number
  readonly file: string
  /** Records written to it and not yet known to be in the ledger. */
  outstanding: number
  /** Some of its records are only on disk. */
  spilled: boolean
}

const segmentName = /^segment-(\d{12})\.jsonl$/
const fileOf = (directory: string, id: number) => path.join(directory, `segment-${String(id).padStart(12, "0")}.jsonl`)

const makeJournal = (options: UsageJournalOptions) =>
  Effect.gen(function*() {
    const { directory } = options
    const existing = yield* Effect.try({
      try: () => {
        fs.mkdirSync(directory, { recursive: true })
        fs.accessSync(directory, fs.constants.W_OK)
        return fs.readdirSync(directory).flatMap((name) => {
          const match = segmentName.exec(name)
          return match ? [Number(match[1])] : []
        }).sort((a, b) => a - b)
      },
      catch: (cause) => new JournalUnavailable({ directory, cause })
    })
    // Segments left by an earlier run are read back whole: whatever of them is already in the
    // ledger is ignored there.
    const segments = new Map<number, Segment>(
      existing.map((id) => [id, { id, file: fileOf(directory, id), outstanding: 0, spilled: true }])
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
    let appendFailing = false

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

    const open = () => {
      const segment: Segment = { id: nextId++, file: fileOf(directory, nextId - 1), outstanding: 0, spilled: false }
      const fd = fs.openSync(segment.file, "a")
      segments.set(segment.id, segment)
      current = { segment, fd, bytes: 0 }
      newFile = true
      return current
    }

    const append = (line: string): Effect.Effect<Option.Option<number>> =>
      Effect.suspend(() => {
        try {
          if (current !== undefined && current.bytes >= options.segmentBytes) close()
          const target = current ?? open()
          const bytes = Buffer.from(line + "\n", "utf8")
          // A synchronous write: once it returns, the line is the kernel's and outlives this process.
          fs.writeSync(target.fd, bytes)
          target.bytes += bytes.length
          target.segment.outstanding++
          dirty = true
          if (appendFailing) {
            appendFailing = false
            return Effect.as(Effect.logInfo("usage journal writable again"), Option.some(target.segment.id))
          }
          return Effect.succeed(Option.some(target.segment.id))
        } catch (cause) {
          // The disk refused (full?): the record is kept in memory only, and that is said once.
          close()
          const first = !appendFailing
          appendFailing = true
          return first
            ? Effect.as(
              Effect.logError("usage journal cannot be written: records are kept in memory only until it can").pipe(
                Effect.annotateLogs({ directory, cause: String(cause) })
              ),
              Option.none()
            )
            : Effect.succeed(Option.none())
        }
      })

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
          : Effect.logError("usage journal sync failed").pipe(Effect.annotateLogs({ cause: failures[0] }))
      )
    )

    const syncer = yield* Effect.forkScoped(Effect.repeat(syncRound, Schedule.spaced(options.syncEvery)))
    // Last: the periodic sync stops, then everything written is synced and closed.
    yield* Effect.addFinalizer(() => Fiber.interrupt(syncer).pipe(Effect.zipRight(Effect.sync(close)), Effect.zipRight(syncRound)))

    return {
      append,
      committed,
      spill,
      reload,
      segments: Effect.sync(() => segments.size)
    }
  })
