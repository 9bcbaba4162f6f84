import { Cause, Deferred, Duration, Effect, Exit } from "effect"

/** A lookup's answer as an effect (looked up when not remembered), or, read synchronously, the one remembered at `now`. */
export interface ExpiringLookup<A, E> {
  (key: string): Effect.Effect<A, E>
  /** The answer remembered for `key` and not yet expired at `now` (ms, the Clock's), else undefined: no effect to run. */
  readonly remembered: (key: string, now: number) => A | undefined
}

/**
 * Remembers the successful answers of a lookup for a while, in a plain Map: a hit costs one map
 * read and a clock read, a few times less than Effect's Cache. Concurrent misses of one key share
 * a single lookup; failures are not remembered (the next call asks again). Beyond `capacity` the
 * oldest answers are forgotten first.
 */
export const expiringLookup = <A, E>(options: {
  readonly lookup: (key: string) => Effect.Effect<A, E>
  readonly timeToLive: Duration.DurationInput
  readonly capacity: number
}): ExpiringLookup<A, E> => {
  const ttlMs = Duration.toMillis(options.timeToLive)
  const remembered = new Map<string, { readonly expiresAt: number; readonly value: A }>()
  const pending = new Map<string, Deferred.Deferred<A, E>>()

  const remember = (key: string, value: A, now: number) => {
    remembered.delete(key)
    if (remembered.size >= options.capacity) {
      const oldest = remembered.keys().next()
      if (oldest.done !== true) remembered.delete(oldest.value)
    }
    remembered.set(key, { expiresAt: now + ttlMs, value })
  }

  const load = (key: string): Effect.Effect<A, E> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Deferred.make<A, E>(), (deferred) => {
        pending.set(key, deferred)
        return restore(options.lookup(key)).pipe(
          Effect.onExit((exit) =>
            Effect.clockWith((clock) => {
              pending.delete(key)
              if (Exit.isSuccess(exit)) remember(key, exit.value, clock.unsafeCurrentTimeMillis())
              return Deferred.done(deferred, exit)
            })
          )
        )
      })
    )

  const get = (key: string): Effect.Effect<A, E> =>
    Effect.clockWith((clock) => {
      const hit = remembered.get(key)
      if (hit !== undefined && hit.expiresAt > clock.unsafeCurrentTimeMillis()) return Effect.succeed(hit.value)
      const shared = pending.get(key)
      if (shared === undefined) return load(key)
      // The fiber doing the shared lookup was interrupted (its client left): look up again.
      return Deferred.await(shared).pipe(
        Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? get(key) : Effect.failCause(cause)))
      )
    })

  return Object.assign(get, {
    remembered: (key: string, now: number): A | undefined => {
      const hit = remembered.get(key)
      return hit !== undefined && hit.expiresAt > now ? hit.value : undefined
    }
  })
}
