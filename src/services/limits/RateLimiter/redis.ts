import { Effect, type Scope } from "effect"
import type { Redis } from "ioredis"
import { untilFull } from "../../../domain/tokenBucket"
import { connectRedis, type RedisConnectionOptions } from "../../../platform/redisConnection"
import { type BucketDemand, type RateLimiterShape, RateLimiterFailure } from "./contract"

/**
 * One script per decision: it refills every bucket from Redis's own clock (so instances agree on
 * time), decides, and takes from all of them or from none, atomically. There is no read-then-write
 * race between instances. Mode "settle" always applies the amounts (they may be negative).
 * A key expires once its bucket would be full anyway (at least two minutes after the last change).
 * Returns the wait in ms, then each bucket's level, as strings (Lua numbers would be truncated).
 */
const script = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local count = #KEYS
local mode = ARGV[2 * count + 1]
local levels = {}
local wait = 0
for i = 1, count do
  local limit = tonumber(ARGV[2 * i - 1])
  local amount = tonumber(ARGV[2 * i])
  local rate = limit / 60000
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens = tonumber(state[1])
  local at = tonumber(state[2])
  if tokens == nil then tokens = limit else tokens = math.min(limit, tokens + math.max(0, now - at) * rate) end
  levels[i] = tokens
  if mode == 'acquire' and amount > tokens then
    wait = math.max(wait, math.ceil((amount - tokens) / rate))
  end
end
local reply = { tostring(wait) }
for i = 1, count do
  local limit = tonumber(ARGV[2 * i - 1])
  local level = levels[i]
  if wait == 0 then
    level = math.min(limit, level - tonumber(ARGV[2 * i]))
    redis.call('HSET', KEYS[i], 'tokens', tostring(level), 'at', tostring(now))
    -- Kept until it would be full again: a bucket in debt must not expire and come back full early.
    redis.call('PEXPIRE', KEYS[i], math.max(120000, math.ceil((limit - level) * 60000 / limit)))
  end
  reply[i + 1] = tostring(level)
end
return reply
`

export type RedisLimiterOptions = RedisConnectionOptions

/** Buckets in Redis, shared by every instance of the service. */
export const makeRedisRateLimiter = (options: RedisLimiterOptions): Effect.Effect<RateLimiterShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* connectRedis(options, "rate limits")
    redis.defineCommand("takeBuckets", { lua: script })

    const run = (demands: ReadonlyArray<BucketDemand>, mode: "acquire" | "settle") =>
      Effect.tryPromise({
        try: () =>
          (redis as Redis & {
            takeBuckets: (count: number, ...args: Array<string | number>) => Promise<Array<string>>
          }).takeBuckets(
            demands.length,
            ...demands.map((d) => d.key),
            ...demands.flatMap((d) => [d.limit, d.amount]),
            mode
          ),
        catch: (cause) => new RateLimiterFailure({ cause })
      }).pipe(Effect.map((reply) => ({ wait: Number(reply[0]), levels: reply.slice(1).map(Number) })))

    return {
      acquire: (demands) =>
        Effect.map(run(demands, "acquire"), ({ levels, wait }) => ({
          allowed: wait === 0,
          retryAfterMs: wait,
          buckets: demands.map((d, i) => ({
            key: d.key,
            limit: d.limit,
            remaining: levels[i]!,
            resetMs: untilFull(levels[i]!, d.limit)
          }))
        })),
      settle: (demands) => Effect.asVoid(run(demands, "settle")),
      settlesInPlace: false,
      // Fails at once while disconnected (no offline queue), or after RATE_LIMIT_REDIS_TIMEOUT_MS.
      reachable: Effect.asVoid(Effect.tryPromise({ try: () => redis.ping(), catch: (cause) => new RateLimiterFailure({ cause }) }))
    }
  })
