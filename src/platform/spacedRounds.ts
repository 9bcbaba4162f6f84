import { Duration, Effect, Fiber, Runtime, type Scope } from "effect"

/**
 * Runs `round` at the next turn of the event loop (as a forked fiber starts once its parent goes on), then again
 * `every` after each one ends (as `Effect.repeat` with `Schedule.spaced`), driven by a plain timer rather than a
 * fiber asleep in a Schedule: each repeat of a Schedule costs the runtime several KB, and an idle service
 * allocating that steadily is never idle to V8 (its memory reducer re-arms instead of collecting).
 * `due`, asked first in plain code, skips a round with nothing to do without entering the runtime at all.
 * Answers the stop: the timer cleared and the round under way interrupted (an uninterruptible one is waited for);
 * the scope's close stops it too. Real time: the test clock does not drive it.
 */
export const forkSpacedRounds = (
  round: Effect.Effect<void>,
  every: Duration.DurationInput,
  due: () => boolean = () => true
): Effect.Effect<Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const ms = Duration.toMillis(every)
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let running: Fiber.RuntimeFiber<void> | undefined
    const later = (delay = ms) => {
      running = undefined
      if (!stopped) timer = setTimeout(tick, delay).unref()
    }
    const tick = () => {
      if (!due()) return later()
      running = runFork(round)
      running.addObserver(() => later())
    }
    const stop = Effect.suspend(() => {
      stopped = true
      clearTimeout(timer)
      return running === undefined ? Effect.void : Fiber.interrupt(running)
    }).pipe(Effect.asVoid)
    yield* Effect.addFinalizer(() => stop)
    later(0)
    return stop
  })
