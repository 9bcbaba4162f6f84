/**
 * Cost of one rate-limit decision (memory and Redis layers) against an empty decision measured in
 * the same harness, and its effect on request latency: the service at one connection with the
 * memory store and with the Redis store. Results: bench/RESULTS.md, section "Rate limits".
 * Needs redis-server on PATH. Run: npm run bench:rate-limits
 */
import { Effect, Layer } from "effect"
import * as os from "node:os"
import { RateLimiter } from "../../src/services/limits/RateLimiter"
import { startRedis } from "../../test/support/redis"
import { ensureBuilt } from "../../test/support/builtService"
import { spawnService, waitForOk } from "../../test/support/serviceProcess"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { writeSection } from "../results"

const decisions = 20_000
const rounds = 5
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const demands = [
  { key: "rl:{w}:chat_completions:requests", limit: 1e9, amount: 1 },
  { key: "rl:{w}:chat_completions:tokens", limit: 1e12, amount: 500 },
  { key: "rl:{w}:chat_completions:model:chatgen-4o:requests", limit: 1e9, amount: 1 },
  { key: "rl:{w}:chat_completions:model:chatgen-4o:tokens", limit: 1e12, amount: 500 }
]

/** Microseconds per decision, one after another (the latency a request sees). */
const perDecision = (layer: Layer.Layer<RateLimiter>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const start = performance.now()
      for (let i = 0; i < decisions; i++) yield* limiter.acquire(demands)
      return ((performance.now() - start) * 1_000) / decisions
    }).pipe(Effect.provide(layer), Effect.scoped)
  )

const baseline = Layer.succeed(RateLimiter, {
  acquire: () => Effect.succeed({ allowed: true, retryAfterMs: 0, buckets: [] }),
  settle: () => Effect.void,
  settlesInPlace: true
})

/** p50 and p99 of sequential chat requests through the whole service, in ms. */
const requestLatency = async (env: Record<string, string>) => {
  const port = String(await Effect.runPromise(freePort))
  const base = `http://127.0.0.1:${port}`
  const admin = { authorization: "Bearer bench-admin-token-12345", "content-type": "application/json" }
  const service = spawnService({ ...env, PORT: port, HOST: "127.0.0.1", ADMIN_TOKEN: "bench-admin-token-12345", LOG_LEVEL: "warning", DATA_DIR: os.tmpdir() + `/ws-bench-rl-${port}` })
  await waitForOk(`${base}/readyz`)
  const limits = { requestsPerMinute: 1e9, tokensPerMinute: 1e12 }
  const workspace = await (await fetch(`${base}/admin/workspaces`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ name: "bench", settings: { rateLimits: { families: { chat_completions: limits }, models: { "chatgen-4o": limits } } } })
  })).json() as { id: string }
  const { key } = await (await fetch(`${base}/admin/workspaces/${workspace.id}/api-keys`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ name: "bench", scopes: ["COMPLETION_API"] })
  })).json() as { key: string }
  const body = JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "Hello, how are you today?" }] })
  const send = async () => {
    const started = performance.now()
    const answer = await fetch(`${base}/provider_a/eu/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body
    })
    await answer.arrayBuffer()
    if (answer.status !== 200) throw new Error(`status ${answer.status}`)
    return performance.now() - started
  }
  for (let i = 0; i < 200; i++) await send()
  const samples: Array<number> = []
  for (let i = 0; i < 1_000; i++) samples.push(await send())
  service.child.kill("SIGTERM")
  await service.exited
  samples.sort((a, b) => a - b)
  return { p50: samples[Math.floor(samples.length * 0.5)]!, p99: samples[Math.floor(samples.length * 0.99)]! }
}

const main = async () => {
  ensureBuilt()
  const redis = await startRedis()
  const timings = { baseline: [] as Array<number>, memory: [] as Array<number>, redis: [] as Array<number> }
  for (let round = 0; round < rounds; round++) {
    timings.baseline.push(await perDecision(baseline))
    timings.memory.push(await perDecision(RateLimiter.memory))
    timings.redis.push(await perDecision(RateLimiter.redis({ url: redis.url, timeoutMs: 1_000 })))
  }
  const memoryLatency = await requestLatency({})
  const redisLatency = await requestLatency({ RATE_LIMIT_STORE: "redis", REDIS_URL: redis.url })
  await redis.stop()

  const us = (value: number) => `${value.toFixed(1)} µs`
  const base = median(timings.baseline)
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}, redis-server on loopback; medians of ${rounds} rounds of ${decisions} sequential decisions (4 buckets each: family and model, requests and tokens).`,
    "",
    "| decision | time per decision | over the empty decision |",
    "|---|---|---|",
    `| empty (baseline: the same Effect call, no limiter) | ${us(base)} | — |`,
    `| memory | ${us(median(timings.memory))} | +${us(median(timings.memory) - base)} |`,
    `| Redis (one script call) | ${us(median(timings.redis))} | +${us(median(timings.redis) - base)} |`,
    "",
    "Request latency through the whole service (chat completion JSON, in-process simulator, 1 connection, 1,000 sequential requests after 200 warm-up):",
    "",
    "| store | p50 | p99 |",
    "|---|---|---|",
    `| memory | ${memoryLatency.p50.toFixed(2)} ms | ${memoryLatency.p99.toFixed(2)} ms |`,
    `| Redis | ${redisLatency.p50.toFixed(2)} ms | ${redisLatency.p99.toFixed(2)} ms |`,
    "",
    `Redis adds one loopback round trip per decision (and one more when a reservation is settled, after the answer): ${(redisLatency.p50 - memoryLatency.p50).toFixed(2)} ms at p50.`
  ]
  writeSection("Rate limits", lines.join("\n"))
  console.log(lines.join("\n"))
}

void main()
