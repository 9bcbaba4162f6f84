import { Effect } from "effect"

/**
 * A macrotask turn: other requests' I/O and timers run before the fiber goes on. (`Effect.yieldNow` is not
 * one: the default scheduler resumes on a microtask, before any I/O.) For long work on the event loop cut
 * into slices: tokenizing a long prompt, encoding an export's rows.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const timer = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(timer))
})
