import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { exportLayouts } from "../../src/domain/exportLayouts"
import { encodeInSlices } from "../../src/services/ExportService/encodeInSlices"
import { encodeValueRows } from "../../src/services/ExportService/valueRows"

const layout = exportLayouts.assistants
const rows = Array.from({ length: 1_000 }, (_, i) => [
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

describe("encodeInSlices", () => {
  it.effect("gives the text of encoding the batch in one piece, whatever the slice budget", () =>
    Effect.gen(function*() {
      const whole = encodeValueRows(rows, layout)
      for (const budgetMs of [0, 2, 1_000]) {
        expect(yield* encodeInSlices(rows, (slice) => encodeValueRows(slice, layout), budgetMs)).toBe(whole)
      }
      expect(yield* encodeInSlices([], (slice) => encodeValueRows(slice, layout))).toBe("")
    }))

  it.live("lets the event loop run other work between slices of one batch", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      // Other I/O waiting its turn when the batch starts.
      setImmediate(() => events.push("other work"))
      let slices = 0
      yield* encodeInSlices(rows, (slice) => {
        slices += 1
        events.push(`slice ${slices}`)
        return encodeValueRows(slice, layout)
      }, 0)
      // A budget of 0 ms: a turn after every slice of 64 rows; the other work ran after the first.
      expect(slices).toBe(Math.ceil(rows.length / 64))
      expect(events.slice(0, 2)).toEqual(["slice 1", "other work"])
    }))

  it.live("gives no turn within a batch that is encoded within its budget", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      setImmediate(() => events.push("other work"))
      yield* encodeInSlices(rows.slice(0, 200), (slice) => {
        events.push(`${slice.length} rows`)
        return encodeValueRows(slice, layout)
      }, 60_000)
      expect(events).toEqual(["64 rows", "64 rows", "64 rows", "8 rows"])
    }))
})
