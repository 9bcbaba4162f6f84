import type { ExportKind } from "../../../domain/exportLayouts"

export interface ExportRange {
  readonly workspaceId: string
  readonly kind: ExportKind
  /** The reporting zone: it decides the local days, so the rows. */
  readonly zone: string
  readonly from: Date
  readonly to: Date
}

export interface RefusedRanges {
  /** Whether a range known to be over the row limit lies within this one (so this one is over it too). */
  readonly covers: (range: ExportRange, now: number) => boolean
  readonly remember: (range: ExportRange, now: number) => void
}

/**
 * The export ranges this instance found over the row limit, so that a refusal asked again (a client retrying,
 * or widening the range) is answered without reading the ledger again. Exact, not an estimate: the event tables
 * are append-only (a trigger refuses UPDATE and DELETE), so an export's rows only ever grow, and a wider range in
 * the same zone has every row of the narrower one. Entries expire after `ttlMs`, so an operator's retention
 * (TRUNCATE, a dropped partition) is noticed within that time; at most `maxEntries` are kept, oldest dropped.
 */
export const makeRefusedRanges = (options: { readonly ttlMs: number; readonly maxEntries: number }): RefusedRanges => {
  // key: workspace, kind, zone → refused [from, to) with the time they were found.
  const entries = new Map<string, Array<{ readonly from: number; readonly to: number; readonly at: number }>>()
  let size = 0
  const keyOf = (range: ExportRange) => `${range.workspaceId}\n${range.kind}\n${range.zone}`

  const fresh = (key: string, now: number) => {
    const list = entries.get(key)
    if (list === undefined) return []
    const kept = list.filter((entry) => now - entry.at < options.ttlMs)
    size -= list.length - kept.length
    if (kept.length === 0) entries.delete(key)
    else entries.set(key, kept)
    return kept
  }

  return {
    covers: (range, now) =>
      fresh(keyOf(range), now).some((entry) => entry.from >= range.from.getTime() && entry.to <= range.to.getTime()),
    remember: (range, now) => {
      const key = keyOf(range)
      const list = [...fresh(key, now), { from: range.from.getTime(), to: range.to.getTime(), at: now }]
      entries.delete(key)
      entries.set(key, list)
      size += 1
      // The least recently refused keys go first.
      for (const [oldest, dropped] of entries) {
        if (size <= options.maxEntries) break
        entries.delete(oldest)
        size -= dropped.length
      }
    }
  }
}
