import { Effect, type Scope } from "effect"
import type { Redis } from "ioredis"
import { connectRedis, type RedisConnectionOptions } from "../../../platform/redisConnection"
import { type BudgetLine, type BudgetStoreShape, BudgetStoreFailure } from "./contract"

/**
 * Each line is three keys: a hash (`spent`, `held`: settled and reserved nano-dollars), a sorted set of its
 * reservations by when they lapse, and a hash of their amounts. Every script first drops the lapsed
 * reservations of its lines (Redis's own clock, so instances agree), then decides or settles, atomically.
 * Keys live until a day after their period ends.
 */
const dropLapsed = `
local function dropLapsed(base, now)
  local lapsed = redis.call('ZRANGEBYSCORE', KEYS[base + 1], '-inf', now)
  if #lapsed > 0 then
    local amounts = redis.call('HMGET', KEYS[base + 2], unpack(lapsed))
    local sum = 0
    for _, amount in ipairs(amounts) do sum = sum + (tonumber(amount) or 0) end
    redis.call('HINCRBY', KEYS[base], 'held', -sum)
    redis.call('ZREM', KEYS[base + 1], unpack(lapsed))
    redis.call('HDEL', KEYS[base + 2], unpack(lapsed))
  end
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local count = #KEYS / 3
`

/** ARGV: id, amount, ttl, then per line its amount and its keys' lifetime end (epoch ms). Returns the refused line (1-based) or 0. */
const reserveScript = `${dropLapsed}
local id, amount, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 1, count do
  local base = 3 * i - 2
  dropLapsed(base, now)
  local state = redis.call('HMGET', KEYS[base], 'spent', 'held')
  if (tonumber(state[1]) or 0) + (tonumber(state[2]) or 0) + amount > tonumber(ARGV[2 + 2 * i]) then return i end
end
for i = 1, count do
  local base = 3 * i - 2
  redis.call('HINCRBY', KEYS[base], 'held', amount)
  redis.call('ZADD', KEYS[base + 1], now + ttl, id)
  redis.call('HSET', KEYS[base + 2], id, amount)
  local keep = math.max(60000, tonumber(ARGV[3 + 2 * i]) - now)
  for k = base, base + 2 do redis.call('PEXPIRE', KEYS[k], keep) end
end
return 0
`

/** ARGV: id, cost. Returns each line's spend after. */
const settleScript = `${dropLapsed}
local id, cost = ARGV[1], tonumber(ARGV[2])
local reply = {}
for i = 1, count do
  local base = 3 * i - 2
  if redis.call('ZREM', KEYS[base + 1], id) == 1 then
    local amount = tonumber(redis.call('HGET', KEYS[base + 2], id)) or 0
    redis.call('HDEL', KEYS[base + 2], id)
    redis.call('HINCRBY', KEYS[base], 'held', -amount)
  end
  reply[i] = tostring(redis.call('HINCRBY', KEYS[base], 'spent', cost))
end
return reply
`

/** Returns spent and held of each line. */
const usageScript = `${dropLapsed}
local reply = {}
for i = 1, count do
  local base = 3 * i - 2
  dropLapsed(base, now)
  local state = redis.call('HMGET', KEYS[base], 'spent', 'held')
  reply[2 * i - 1] = tostring(tonumber(state[1]) or 0)
  reply[2 * i] = tostring(tonumber(state[2]) or 0)
end
return reply
`

const keysOf = (lines: ReadonlyArray<BudgetLine>): Array<string> =>
  lines.flatMap((line) => {
    const base = `budget:${line.key}:${line.periodStart}`
    return [base, `${base}:reservations`, `${base}:amounts`]
  })

type Scripted = Redis & {
  budgetReserve: (keys: number, ...args: Array<string | number>) => Promise<number>
  budgetSettle: (keys: number, ...args: Array<string | number>) => Promise<Array<string>>
  budgetUsage: (keys: number, ...args: Array<string | number>) => Promise<Array<string>>
}

/** Budgets in Redis (RATE_LIMIT_STORE=redis), shared by every instance. Line keys carry the workspace's hash tag. */
export const makeRedisBudgetStore = (options: RedisConnectionOptions): Effect.Effect<BudgetStoreShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* connectRedis(options, "budgets")
    connection.defineCommand("budgetReserve", { lua: reserveScript })
    connection.defineCommand("budgetSettle", { lua: settleScript })
    connection.defineCommand("budgetUsage", { lua: usageScript })
    const redis = connection as Scripted
    const call = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: (cause) => new BudgetStoreFailure({ cause }) })
    return {
      reserve: (reservationId, lines, amountNano, ttlMs) =>
        Effect.map(
          call(() => {
            const keys = keysOf(lines)
            // Kept a day past the period's end: the key list's spentUsd reads the current period only.
            const perLine = lines.flatMap((line) => [line.limitNano, line.periodEnd + 86_400_000])
            return redis.budgetReserve(keys.length, ...keys, reservationId, amountNano, ttlMs, ...perLine)
          }),
          (refused) => (Number(refused) === 0 ? { allowed: true } : { allowed: false, refusedLine: Number(refused) - 1 })
        ),
      settle: (reservationId, lines, costNano) =>
        Effect.map(
          call(() => {
            const keys = keysOf(lines)
            return redis.budgetSettle(keys.length, ...keys, reservationId, costNano)
          }),
          (after) => lines.map((_, i) => ({ beforeNano: Number(after[i]) - costNano, afterNano: Number(after[i]) }))
        ),
      usage: (lines) =>
        Effect.map(
          call(() => {
            const keys = keysOf(lines)
            return redis.budgetUsage(keys.length, ...keys)
          }),
          (reply) => lines.map((_, i) => ({ spentNano: Number(reply[2 * i]), reservedNano: Number(reply[2 * i + 1]) }))
        )
    }
  })
