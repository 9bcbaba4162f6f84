import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import { expiringLookup } from "../../src/platform/expiringLookup"

/** A lookup that counts its calls and answers `<key>#<call>`, failing for keys starting with "bad". */
const counted = () => {
  const calls: Array<string> = []
  const lookup = (key: string) =>
    Effect.suspend(() => {
      calls.push(key)
      return key.startsWith("bad") ? Effect.fail(`no ${key}` as const) : Effect.succeed(`${key}#${calls.length}`)
    })
  return { calls, lookup }
}

describe("expiringLookup", () => {
  it.effect("answers from memory until the time to live has passed, then looks up again", () =>
    Effect.gen(function*() {
      const { calls, lookup } = counted()
      const get = expiringLookup({ lookup, timeToLive: "1 second", capacity: 10 })
      expect(yield* get("a")).toBe("a#1")
      yield* TestClock.adjust("999 millis")
      expect(yield* get("a")).toBe("a#1")
      yield* TestClock.adjust("1 millis")
      expect(yield* get("a")).toBe("a#2")
      expect(calls).toEqual(["a", "a"])
    }))

  it.effect("does not remember failures", () =>
    Effect.gen(function*() {
      const { calls, lookup } = counted()
      const get = expiringLookup({ lookup, timeToLive: "1 minute", capacity: 10 })
      expect(yield* Effect.flip(get("bad"))).toBe("no bad")
      expect(yield* Effect.flip(get("bad"))).toBe("no bad")
      expect(calls).toEqual(["bad", "bad"])
    }))

  it.effect("forgets the oldest answers beyond its capacity", () =>
    Effect.gen(function*() {
      const { calls, lookup } = counted()
      const get = expiringLookup({ lookup, timeToLive: "1 minute", capacity: 2 })
      yield* get("a")
      yield* get("b")
      yield* get("c")
      yield* get("b")
      yield* get("c")
      expect(calls).toEqual(["a", "b", "c"])
      yield* get("a")
      expect(calls).toEqual(["a", "b", "c", "a"])
    }))

  it.effect("shares one lookup between concurrent misses, and a waiter looks up itself when the looker is interrupted", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const calls: Array<string> = []
      const get = expiringLookup({
        lookup: (key) => Effect.zipRight(Effect.sync(() => calls.push(key)), Effect.as(Deferred.await(release), `${key}!`)),
        timeToLive: "1 minute",
        capacity: 10
      })
      const first = yield* Effect.fork(get("k"))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(get("k"))
      const third = yield* Effect.fork(get("k"))
      yield* Effect.yieldNow()
      expect(calls).toEqual(["k"])
      // The first caller leaves: one of the others takes the lookup over.
      yield* Fiber.interrupt(first)
      yield* Effect.yieldNow()
      expect(calls).toEqual(["k", "k"])
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(second)).toBe("k!")
      expect(yield* Fiber.join(third)).toBe("k!")
      expect(calls).toEqual(["k", "k"])
      expect(Exit.isSuccess(yield* Effect.exit(get("k")))).toBe(true)
      expect(calls).toEqual(["k", "k"])
    }))
})
