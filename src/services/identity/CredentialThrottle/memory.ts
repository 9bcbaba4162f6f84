import { Effect } from "effect"
import type { FailureStore } from "./contract"

interface Window {
  readonly endsAt: number
  failures: number
}

/**
 * Failures counted in this process. Decisions are synchronous, so nothing interleaves between reading and
 * writing. Only counted failures make entries, and the global count bounds those per window; the
 * capacity is a second guard (ended windows are swept first, then the oldest go).
 */
export const makeMemoryFailureStore = (capacity = 100_000): FailureStore => {
  const windows = new Map<string, Window>()
  const makeRoom = (now: number) => {
    for (const [key, window] of windows) if (window.endsAt <= now) windows.delete(key)
    while (windows.size >= capacity) {
      const oldest = windows.keys().next()
      if (oldest.done === true) break
      windows.delete(oldest.value)
    }
  }
  return {
    add: (counts, windowMs) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const current = counts.map(({ key }) => {
          const window = windows.get(key)
          return window !== undefined && window.endsAt > now ? window : undefined
        })
        let waitMs = 0
        counts.forEach(({ limit }, i) => {
          const window = current[i]
          if (window !== undefined && window.failures >= limit) waitMs = Math.max(waitMs, window.endsAt - now)
        })
        if (waitMs > 0) return Effect.succeed({ waitMs, failures: current.map((window) => window?.failures ?? 0) })
        const failures = counts.map(({ key }, i) => {
          let window = current[i]
          if (window === undefined) {
            if (windows.size >= capacity) makeRoom(now)
            window = { endsAt: now + windowMs, failures: 0 }
            windows.set(key, window)
          }
          window.failures += 1
          return window.failures
        })
        return Effect.succeed({ waitMs: 0, failures })
      }),
    remove: (counts) =>
      Effect.sync(() => {
        for (const { key } of counts) {
          const window = windows.get(key)
          if (window !== undefined && window.failures > 0) window.failures -= 1
        }
      })
  }
}
