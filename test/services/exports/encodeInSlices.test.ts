import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CSV_LINE_END } from "../../../src/domain/csv"
import { exportLayouts } from "../../../src/domain/exportLayouts"
import { encodeInSlices } from "../../../src/services/exports/ExportService/encodeInSlices"
import { encodeValueRows } from "../../../src/services/exports/ExportService/valueRows"
import type { ValueRow } from "../../../src/services/usage/3-UsageLedger/index"

const layout = exportLayouts.assistants
const rows: ReadonlyArray<ValueRow> = Array.from({ length: 1_000 }, (_, i) => [
  "2026-01-05T00:00:00+01:00",
  "2026-01-06T00:00:00+01:00",
  `a${i}`,
  i % 7 === 0 ? `=Helper, "the" ${i}` : `Helper ${i}`,
  i,
  i % 5,
  i % 3,
  10 * i,
  20 * i
])
const line = (row: ValueRow) => encodeValueRows([row], layout).slice(0, -CSV_LINE_END.length)

describe("encodeInSlices", () => {
  it.effect("gives the lines of encoding the batch in one piece, whatever the slice budget", () =>
    Effect.gen(function*() {
      const whole = encodeValueRows(rows, layout)
      for (const budgetMs of [0, 2, 1_000]) {
        const lines = yield* encodeInSlices(rows, line, budgetMs)
        expect(lines.join(CSV_LINE_END) + CSV_LINE_END).toBe(whole)
      }
      expect(yield* encodeInSlices([], line)).toEqual([])
    }))

  it.live("lets the event loop run other work between slices of one batch", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      // Other I/O waiting its turn when the batch starts.
      setImmediate(() => events.push("other work"))
      let encoded = 0
      yield* encodeInSlices(rows, (row) => {
        encoded += 1
        if (encoded % 64 === 1) events.push(`slice from row ${encoded}`)
        return line(row)
      }, 0)
      // A budget of 0 ms: a turn after every 64 rows; the other work ran right after the first slice.
      expect(events.filter((event) => event.startsWith("slice"))).toHaveLength(Math.ceil(rows.length / 64))
      expect(events.slice(0, 3)).toEqual(["slice from row 1", "other work", "slice from row 65"])
    }))

  it.live("gives no turn within a batch that is encoded within its budget", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      setImmediate(() => events.push("other work"))
      const lines = yield* encodeInSlices(rows.slice(0, 200), (row) => {
        events.push("row")
        return line(row)
      }, 60_000)
      expect(lines).toHaveLength(200)
      expect(events).toEqual(Array.from({ length: 200 }, () => "row"))
    }))
})
