import { Context, Effect, Layer } from "effect"
import { UsageLedger } from "../../src/services/usage/3-UsageLedger/index"

export interface ExportReads {
  /** Export reads open now (between the count and the end of the export). */
  readonly open: number
  /** The most that were open at once. */
  readonly most: number
  /** Reads begun in all. */
  readonly total: number
}

/** Holds the export reads of chosen workspaces open until the test lets them go, and counts them. */
export class LedgerGate extends Context.Tag("LedgerGate")<LedgerGate, {
  /** From now on, export reads of this workspace wait at their start until `release`. */
  readonly hold: (workspaceId: string) => Effect.Effect<void>
  /** Lets every held read go on; later reads of those workspaces are not held. */
  readonly release: Effect.Effect<void>
  readonly reads: (workspaceId: string) => ExportReads
}>() {}

/**
 * The usage ledger it is given, with export reads that a test can hold open and count: exports made
 * slow on demand, without timing, so that what runs and what waits can be observed. Everything else is
 * the ledger's own.
 */
export const gatedLedger: Layer.Layer<UsageLedger | LedgerGate, never, UsageLedger> = Layer.effectContext(
  Effect.gen(function*() {
    const ledger = yield* UsageLedger
    const held = new Map<string, Effect.Latch>()
    const reads = new Map<string, { open: number; most: number; total: number }>()
    const readsOf = (workspaceId: string) => {
      const existing = reads.get(workspaceId)
      if (existing !== undefined) return existing
      const fresh = { open: 0, most: 0, total: 0 }
      reads.set(workspaceId, fresh)
      return fresh
    }
    /** A read counted while open, held at its start while its workspace is held. */
    const gate = <A, E, R>(workspaceId: string, read: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const counted = readsOf(workspaceId)
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            counted.open += 1
            counted.total += 1
            counted.most = Math.max(counted.most, counted.open)
          }),
          () => Effect.sync(() => void (counted.open -= 1))
        )
        const latch = held.get(workspaceId)
        if (latch !== undefined) yield* latch.await
        return yield* read
      })
    const gated = UsageLedger.of({
      ...ledger,
      readExport: (kind, input, limits) => gate(input.workspaceId, ledger.readExport(kind, input, limits)),
      readExportCsv: (kind, input, limits) => gate(input.workspaceId, ledger.readExportCsv(kind, input, limits))
    })
    return Context.make(UsageLedger, gated).pipe(Context.add(LedgerGate, {
      hold: (workspaceId) => Effect.map(Effect.makeLatch(false), (gate) => void held.set(workspaceId, gate)),
      release: Effect.suspend(() => Effect.forEach([...held.values()], (gate) => gate.open, { discard: true })),
      reads: (workspaceId) => ({ ...readsOf(workspaceId) })
    }))
  })
)
