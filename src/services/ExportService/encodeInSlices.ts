import { Effect } from "effect"
import { yieldToEventLoop } from "../eventLoopTurn"

/** Rows encoded between two looks at the clock: a slice overshoots its budget by a few dozen rows at most. */
const ROWS_PER_CHECK = 64

/** The longest the encoder holds the event loop before other requests get a turn. */
export const SLICE_BUDGET_MS = 2

/**
 * A batch of rows encoded by `encode` a slice at a time: each slice runs until `budgetMs` have passed, then the
 * event loop gets a turn (other requests' I/O and timers) before the next. A batch of 5,000 wide rows takes
 * 5–50 ms to encode on this machine kind (more under GC or a shared CPU): in one piece it stalls every other
 * request of the instance that long, once per batch of every running export. Same text as `encode(rows)`.
 */
export const encodeInSlices = <Row>(
  rows: ReadonlyArray<Row>,
  encode: (rows: ReadonlyArray<Row>) => string,
  budgetMs: number = SLICE_BUDGET_MS
): Effect.Effect<string> =>
  Effect.suspend(() => {
    let text = ""
    let next = 0
    const slice = Effect.sync(() => {
      const started = performance.now()
      do {
        text += encode(rows.slice(next, next + ROWS_PER_CHECK))
        next += ROWS_PER_CHECK
      } while (next < rows.length && performance.now() - started < budgetMs)
    })
    const loop = (): Effect.Effect<string> =>
      Effect.flatMap(slice, () => next < rows.length ? Effect.zipRight(yieldToEventLoop, Effect.suspend(loop)) : Effect.succeed(text))
    return loop()
  })
