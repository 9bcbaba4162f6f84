import { Effect, type Scope } from "effect"
import type { Redis } from "ioredis"
import { connectRedis, type RedisConnectionOptions } from "../../../platform/redisConnection"
import { type FailureStore, ThrottleStoreFailure } from "./contract"

/**
 * One script per decision, as the rate limiter's: if any count has reached its limit, nothing is counted
 * and the reply is the longest wait (that count's time to live); else every count is incremented, a new
 * one expiring at the end of its window. Atomic, so instances cannot pass a limit together.
 * Replies the wait in ms, then each count, as strings.
 */
const script = `
local window = tonumber(ARGV[1])
local count = #KEYS
local failures = {}
local wait = 0
for i = 1, count do
  failures[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if failures[i] >= tonumber(ARGV[i + 1]) then
    local ttl = redis.call('PTTL', KEYS[i])
    -- A count without an expiry (never left so by this script) is given one rather than kept for ever.
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[i], window)
      ttl = window
    end
    wait = math.max(wait, ttl, 1)
  end
end
if wait == 0 then
  for i = 1, count do
    failures[i] = redis.call('INCR', KEYS[i])
    if failures[i] == 1 then redis.call('PEXPIRE', KEYS[i], window) end
  end
end
local reply = { tostring(wait) }
for i = 1, count do reply[i + 1] = tostring(failures[i]) end
return reply
`

/** Takes one failure back from each count that still has one (a window that ended has nothing to give back). */
const removeScript = `
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`

type WithScript = Redis & {
  addFailure: (count: number, ...args: Array<string | number>) => Promise<Array<string>>
  removeFailure: (count: number, ...keys: Array<string>) => Promise<number>
}

/** Failures counted in Redis, shared by every instance of the service. */
export const makeRedisFailureStore = (options: RedisConnectionOptions): Effect.Effect<FailureStore, never, Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* connectRedis(options, "failed credentials")
    redis.defineCommand("addFailure", { lua: script })
    redis.defineCommand("removeFailure", { lua: removeScript })
    return {
      add: (counts, windowMs) =>
        Effect.tryPromise({
          try: () => (redis as WithScript).addFailure(counts.length, ...counts.map((c) => c.key), windowMs, ...counts.map((c) => c.limit)),
          catch: (cause) => new ThrottleStoreFailure({ cause })
        }).pipe(Effect.map((reply) => ({ waitMs: Number(reply[0]), failures: reply.slice(1).map(Number) }))),
      remove: (counts) =>
        Effect.tryPromise({
          try: () => (redis as WithScript).removeFailure(counts.length, ...counts.map((c) => c.key)),
          catch: (cause) => new ThrottleStoreFailure({ cause })
        }).pipe(Effect.asVoid)
    }
  })
