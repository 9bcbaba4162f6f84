import { Effect } from "effect"
import { yieldToEventLoop } from "../../../platform/eventLoopTurn"

/** Rows encoded between two looks at the clock: a slice overshoots its budget by a few dozen rows at most. */
const ROWS_PER_CHECK = 64

/** The longest the encoder holds the event loop before other requests get a turn. */
export const SLICE_BUDGET_MS = 2

/**
 * A batch of rows encoded by `encodeLine`, a slice at a time: each slice runs until `budgetMs` have passed,
 * then the event loop gets a turn (other requests' I/O and timers) before the next. A batch of 5,000 wide
 * rows takes 5–50 ms to encode on this machine kind (more under GC or a shared CPU): in one piece it would
 * stall every other request of the instance that long, once per batch of every running export.
 */
export const encodeInSlices = <Row>(
  rows: ReadonlyArray<Row>,
  encodeLine: (row: Row) => string,
  budgetMs: number = SLICE_BUDGET_MS
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.suspend(() => {
    const lines: Array<string> = []
    const slice = Effect.sync(() => {
      const started = performance.now()
      do {
        const end = Math.min(rows.length, lines.length + ROWS_PER_CHECK)
        for (let i = lines.length; i < end; i++) lines.push(encodeLine(rows[i]!))
      } while (lines.length < rows.length && performance.now() - started < budgetMs)
    })
    const loop = (): Effect.Effect<ReadonlyArray<string>> =>
      Effect.flatMap(slice, () => lines.length < rows.length ? Effect.zipRight(yieldToEventLoop, Effect.suspend(loop)) : Effect.succeed(lines))
    return loop()
  })
