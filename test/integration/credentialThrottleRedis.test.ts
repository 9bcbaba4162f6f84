import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel, Schedule } from "effect"
import { Redis } from "ioredis"
import { CredentialThrottle } from "../../src/services/identity/CredentialThrottle/index"
import { type RedisServer, startRedis } from "../support/redis"

const limits = { limit: 5, networkLimit: 50, globalLimit: 500, windowSeconds: 60 }

/** A second instance's throttle, over its own Redis connection. */
class Other extends Context.Tag("Other")<Other, CredentialThrottle["Type"]>() {}

describe("CredentialThrottle (Redis): one count for every instance", () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await startRedis()
  })
  afterAll(async () => {
    await server?.stop()
  })

  const twoInstances = () => {
    const options = { url: server.url, timeoutMs: 500 }
    return Layer.merge(
      CredentialThrottle.redis(limits, options),
      Layer.effect(Other, CredentialThrottle).pipe(Layer.provide(Layer.fresh(CredentialThrottle.redis(limits, options))))
    ).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.None)))
  }
  let next = 0
  const freshAddress = () => `10.${++next}.0.1`

  it.live("counts failures seen by two instances together, atomically: five of forty concurrent pass", () =>
    Effect.gen(function*() {
      const here = yield* CredentialThrottle
      const there = yield* Other
      const address = freshAddress()
      const outcomes = yield* Effect.all(
        Array.from({ length: 40 }, (_, i) => Effect.either((i % 2 === 0 ? here : there).reserveFailure("api_key", address))),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome._tag === "Right")).toHaveLength(limits.limit)
      const refused = outcomes.find((outcome) => outcome._tag === "Left")
      expect(refused?._tag === "Left" && refused.left.retryAfterMs).toBeGreaterThan(55_000)
      // Admin tokens are counted apart, across instances too.
      yield* here.reserveFailure("admin_token", address)
      yield* there.reserveFailure("admin_token", address)
    }).pipe(Effect.provide(twoInstances())))

  it.live("a failure given back on one instance makes room on the other (a valid key it did not know yet)", () =>
    Effect.gen(function*() {
      const here = yield* CredentialThrottle
      const there = yield* Other
      const address = freshAddress()
      for (let i = 0; i < limits.limit; i++) yield* here.reserveFailure("api_key", address)
      yield* there.releaseFailure("api_key", address)
      yield* here.reserveFailure("api_key", address)
      expect((yield* Effect.flip(there.reserveFailure("api_key", address)))._tag).toBe("CredentialsThrottled")
    }).pipe(Effect.provide(twoInstances())))

  it.live("counts in this instance alone while Redis does not answer, and together again once it does", () =>
    Effect.gen(function*() {
      const here = yield* CredentialThrottle
      const there = yield* Other
      yield* Effect.promise(() => server.stop())
      const address = freshAddress()
      // Never refused for want of Redis: each instance allows its own five, then refuses.
      for (let i = 0; i < limits.limit; i++) yield* here.reserveFailure("api_key", address)
      expect((yield* Effect.flip(here.reserveFailure("api_key", address)))._tag).toBe("CredentialsThrottled")
      for (let i = 0; i < limits.limit; i++) yield* there.reserveFailure("api_key", address)
      yield* Effect.promise(() => server.start())
      // Each instance is back once a failure it counts shows in Redis (its client reconnects on its own).
      const direct = new Redis(server.url)
      const reconnected = (throttle: CredentialThrottle["Type"]) =>
        Effect.suspend(() => {
          const probe = freshAddress()
          return throttle.reserveFailure("api_key", probe).pipe(
            Effect.zipRight(Effect.promise(() => direct.exists(`af:{api_key}:address:${probe}`))),
            Effect.flatMap((found) => (found === 1 ? Effect.void : Effect.fail("not yet")))
          )
        }).pipe(Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 }))
      yield* reconnected(here)
      yield* reconnected(there)
      yield* Effect.promise(() => direct.quit())
      // Then a new address is counted once for both.
      const later = freshAddress()
      for (let i = 0; i < limits.limit; i++) yield* (i % 2 === 0 ? here : there).reserveFailure("api_key", later)
      expect((yield* Effect.flip(there.reserveFailure("api_key", later)))._tag).toBe("CredentialsThrottled")
      expect((yield* Effect.flip(here.reserveFailure("api_key", later)))._tag).toBe("CredentialsThrottled")
    }).pipe(Effect.provide(twoInstances())), 20_000)
})
