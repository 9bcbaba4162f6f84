import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, TestClock } from "effect"
import { CredentialThrottle } from "../../../src/services/identity/CredentialThrottle/index"

const limits = { limit: 3, networkLimit: 5, globalLimit: 8, windowSeconds: 60 }

/** Counts failures until the first refusal: how many were allowed. */
const allowedFrom = (kind: "api_key" | "admin_token", addresses: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const throttle = yield* CredentialThrottle
    let allowed = 0
    for (const address of addresses) {
      const outcome = yield* Effect.either(throttle.reserveFailure(kind, address))
      if (outcome._tag === "Left") break
      allowed += 1
    }
    return allowed
  })

/** The messages and annotations logged while the effect runs. */
const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const lines: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
    const logger = Logger.make(({ annotations, message }) =>
      void lines.push({ message: Array.isArray(message) ? message[0] : message, annotations: Object.fromEntries(annotations) }))
    const result = yield* Effect.provide(effect, Logger.replace(Logger.defaultLogger, logger))
    return { result, lines }
  })

describe("CredentialThrottle (in memory)", () => {
  it.effect("refuses an address past its limit until its window ends, with the wait", () =>
    Effect.gen(function*() {
      const throttle = yield* CredentialThrottle
      expect(yield* allowedFrom("api_key", Array(10).fill("203.0.113.7"))).toBe(3)
      yield* TestClock.adjust("20 seconds")
      const refused = yield* Effect.flip(throttle.reserveFailure("api_key", "203.0.113.7"))
      expect(refused.retryAfterMs).toBe(40_000)
      yield* TestClock.adjust("40 seconds")
      yield* throttle.reserveFailure("api_key", "203.0.113.7")
    }).pipe(Effect.provide(CredentialThrottle.memory(limits))))

  it.effect("a failure given back (the credential proved valid) leaves room for one more", () =>
    Effect.gen(function*() {
      const throttle = yield* CredentialThrottle
      yield* throttle.reserveFailure("api_key", "203.0.113.7")
      yield* throttle.releaseFailure("api_key", "203.0.113.7")
      expect(yield* allowedFrom("api_key", Array(10).fill("203.0.113.7"))).toBe(3)
      // Nothing left to give back goes below zero.
      yield* throttle.releaseFailure("api_key", "198.51.100.1")
      yield* throttle.releaseFailure("api_key", "198.51.100.1")
      expect(yield* allowedFrom("api_key", Array(10).fill("198.51.100.1"))).toBe(3)
    }).pipe(Effect.provide(CredentialThrottle.memory(limits))))

  it.effect("counts API keys and admin tokens apart", () =>
    Effect.gen(function*() {
      expect(yield* allowedFrom("api_key", Array(10).fill("203.0.113.7"))).toBe(3)
      expect(yield* allowedFrom("admin_token", Array(10).fill("203.0.113.7"))).toBe(3)
    }).pipe(Effect.provide(CredentialThrottle.memory(limits))))

  it.effect("bounds rotating addresses by their network, then by the ceiling of all, and logs each", () =>
    Effect.gen(function*() {
      const throttle = yield* CredentialThrottle
      const { lines, result } = yield* logged(Effect.gen(function*() {
        // One failure each from ten addresses of one /24: the network allows five.
        const sameNetwork = yield* allowedFrom("api_key", Array.from({ length: 10 }, (_, i) => `203.0.113.${i + 1}`))
        // Then one each from other networks: everyone together allows eight.
        const elsewhere = yield* allowedFrom("api_key", Array.from({ length: 10 }, (_, i) => `198.51.${i}.1`))
        return { sameNetwork, elsewhere }
      }))
      expect(result).toEqual({ sameNetwork: 5, elsewhere: 3 })
      expect(lines.map((line) => [line.message, line.annotations.scope, line.annotations.subject])).toEqual([
        ["failed credentials throttled", "network", "203.0.113.0/24"],
        ["failed credentials: the ceiling of all addresses is reached", "all", undefined]
      ])
      // The other kind is not concerned.
      yield* throttle.reserveFailure("admin_token", "192.0.2.1")
    }).pipe(Effect.provide(CredentialThrottle.memory(limits))))

  it.effect("logs an address once, when it spends its failures", () =>
    Effect.gen(function*() {
      const { lines } = yield* logged(allowedFrom("admin_token", Array(10).fill("2001:db8::7")))
      expect(lines).toHaveLength(1)
      expect(lines[0]!.annotations).toMatchObject({ credential: "admin_token", scope: "address", subject: "2001:db8::7", failures: 3 })
    }).pipe(Effect.provide(CredentialThrottle.memory(limits))))
})
