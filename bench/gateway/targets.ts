// The processes the gateway benchmarks measure and how each is asked: the simulator (the upstream, and the target
// "direct"), the floor, the service and the peer gateway, started pinned as bench:gateway runs them; a key of a
// workspace whose limits never bind; the forwarded requests in each target's own routing.
import * as path from "node:path"
import { builtEntry } from "../../test/support/builtService"
import type { Request } from "./load"
import { peerHeaders } from "./peer"
import { type pinning, start, type Started } from "./processes"

export type Pinning = ReturnType<typeof pinning>

const root = path.resolve(import.meta.dirname, "../..")
const node = process.execPath

export const adminToken = "bench-admin-token-0123456789"

/** 20 output tokens, one per chunk: a streamed answer has 20 content chunks. */
export const twentyTokens = "Say something short. [simulator output_tokens=20 chunk_tokens=1]"

/** The same 20 chunks, `delayMs` apart: the simulator paces its events when the prompt asks it to. */
export const pacedTwentyTokens = (delayMs: number): string =>
  `Say something short. [simulator output_tokens=20 chunk_tokens=1 chunk_delay_ms=${delayMs}]`

/** A chat completion request; `fields`: more members of the body (e.g. stream_options). */
export const chatBody = (options: { readonly stream: boolean; readonly prompt?: string; readonly fields?: Record<string, unknown> }): string =>
  JSON.stringify({
    model: "chatgen-4o",
    ...(options.stream ? { stream: true } : {}),
    messages: [{ role: "user", content: options.prompt ?? twentyTokens }],
    ...options.fields
  })

/** The simulator on the driver's core, with zero delay unless a request asks for one. */
export const startSimulator = (pin: Pinning, port: number, log: string): Started =>
  start("simulator", [...pin.driver, node, ...builtEntry("simulator")], {
    cwd: root,
    log,
    env: { SIMULATOR_PORT: String(port), SIMULATOR_HOST: "127.0.0.1", SIMULATOR_TOKENIZER: "approximate", SIMULATOR_CHUNK_TOKENS: "1" }
  })

/** The floor (floorProxy.ts) on the core under test; `connections`: its upstream pool's size (64 unless given). */
export const startFloor = (pin: Pinning, port: number, upstreamUrl: string, log: string, connections?: number): Started =>
  start("floor", [...pin.underTest, node, "--import", "tsx", "bench/gateway/floorProxy.ts"], {
    cwd: root,
    log,
    env: { FLOOR_PORT: String(port), FLOOR_UPSTREAM: upstreamUrl, ...(connections === undefined ? {} : { FLOOR_CONNECTIONS: String(connections) }) }
  })

/** The floor served in Effect fibers (effectFloorProxy.ts), on the core under test. */
export const startEffectFloor = (pin: Pinning, port: number, upstreamUrl: string, log: string): Started =>
  start("effect floor", [...pin.underTest, node, "--import", "tsx", "bench/gateway/effectFloorProxy.ts"], {
    cwd: root,
    log,
    env: { EFFECT_FLOOR_PORT: String(port), FLOOR_UPSTREAM: upstreamUrl }
  })

/** The service's settings in a benchmark: its own data folder, both providers' upstreams on the simulator. */
export const serviceEnv = (port: number, dataDir: string, simulatorUrl: string): Record<string, string> => ({
  PORT: String(port),
  HOST: "127.0.0.1",
  DATA_DIR: dataDir,
  ADMIN_TOKEN: adminToken,
  LOG_LEVEL: "info",
  UPSTREAM_PROVIDER_A_EU_URL: simulatorUrl,
  UPSTREAM_PROVIDER_A_EU_KEY: "bench",
  UPSTREAM_PROVIDER_B_EU_URL: simulatorUrl,
  UPSTREAM_PROVIDER_B_EU_KEY: "bench"
})

/**
 * The built service on the core under test, as `npm start` runs it. Per-request log lines are part of the cost:
 * written at the default level, to /dev/null. `cwd`: another build's folder; `nodeFlags`: before its entry.
 */
export const startService = (
  pin: Pinning,
  options: {
    readonly name?: string
    readonly port: number
    readonly dataDir: string
    readonly simulatorUrl: string
    readonly cwd?: string
    readonly nodeFlags?: ReadonlyArray<string>
    readonly env?: Record<string, string>
    /** Its `npm start` flags (another checkout's own); this checkout's unless given. */
    readonly startFlags?: ReadonlyArray<string>
  }
): Started =>
  start(options.name ?? "service", [
    ...pin.underTest,
    node,
    ...(options.nodeFlags ?? []),
    ...(options.startFlags === undefined ? builtEntry("main") : [...options.startFlags, "dist/server/main.js"])
  ], {
    cwd: options.cwd ?? root,
    log: "/dev/null",
    env: { ...serviceEnv(options.port, options.dataDir, options.simulatorUrl), ...options.env }
  })

/** The peer gateway with its own start script, bound to 127.0.0.1 by a preloaded listen patch. */
export const startPeer = (pin: Pinning, entry: string, port: number, log: string): Started =>
  start(
    "peer",
    [...pin.underTest, node, "--import", path.join(import.meta.dirname, "bindLoopback.mjs"), entry, `--port=${port}`, "--headless"],
    { cwd: path.dirname(entry), log, env: { NODE_ENV: "production" } }
  )

const adminPost = async (url: string, body: unknown): Promise<Record<string, unknown>> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Record<string, unknown>
}

const unbound = { requestsPerMinute: 100_000_000, tokensPerMinute: 1_000_000_000 }

/** The workspace's settings: every family's limits on but never binding (`responses` where the build has it). */
const benchSettings = (withResponses: boolean) => ({
  rateLimits: {
    families: { chat_completions: unbound, embeddings: unbound, messages: unbound, ...(withResponses ? { responses: unbound } : {}) },
    models: { "chatgen-4o": unbound, "assistantmodel-sonnet-4-5-20250929": unbound, "text-embedding-ada-002": unbound }
  }
})

/** A workspace whose limits are on but never binding, and a key of it (an earlier build without the Responses family too). */
export const provision = async (serviceUrl: string): Promise<string> => {
  const workspace = await adminPost(`${serviceUrl}/admin/workspaces`, { name: "gateway-bench", settings: benchSettings(true) }).catch(() =>
    adminPost(`${serviceUrl}/admin/workspaces`, { name: "gateway-bench", settings: benchSettings(false) })
  )
  const key = await adminPost(`${serviceUrl}/admin/workspaces/${String(workspace.id)}/api-keys`, {
    name: "bench",
    scopes: ["COMPLETION_API"]
  })
  return String(key.key)
}

/** How a target is asked: the service with a key, the peer routed to the simulator, or plainly (simulator, floor). */
export type Via =
  | { readonly kind: "service"; readonly key: string }
  | { readonly kind: "peer"; readonly simulatorUrl: string }
  | { readonly kind: "plain" }

export type Family = "chat" | "embeddings" | "messages" | "responses"

const servicePaths: Record<Family, string> = {
  chat: "/provider_a/eu/v1/chat/completions",
  embeddings: "/provider_a/eu/v1/embeddings",
  messages: "/provider_b/eu/v1/messages",
  responses: "/provider_a/eu/v1/responses"
}
const plainPaths: Record<Family, string> = {
  chat: "/v1/chat/completions",
  embeddings: "/v1/embeddings",
  messages: "/v1/messages",
  responses: "/v1/responses"
}

/** A Responses API request of the chat workloads' model and prompt (twenty tokens of output). */
export const responsesBody = (options: { readonly stream: boolean }): string =>
  JSON.stringify({ model: "chatgen-4o", input: twentyTokens, stream: options.stream })

/** One forwarded request of a family, as the target routes it. */
export const forwarded = (via: Via, family: Family, body: string): Request => {
  const protocol: Record<string, string> = family === "messages" ? { "anthropic-version": "2023-06-01" } : {}
  switch (via.kind) {
    case "service":
      return { path: servicePaths[family], body, headers: { authorization: `Bearer ${via.key}`, ...protocol } }
    case "peer":
      return { path: plainPaths[family], body, headers: { ...peerHeaders(via.simulatorUrl, family === "messages" ? "anthropic" : "openai"), ...protocol } }
    case "plain":
      return { path: plainPaths[family], body, headers: protocol }
  }
}

/** Why one request of the workload is not answered 200 by the target, or undefined when it is. */
export const failureOf = async (baseUrl: string, request: Request): Promise<string | undefined> => {
  const answer = await fetch(baseUrl + request.path, {
    method: "POST",
    headers: { "content-type": "application/json", ...request.headers },
    body: request.body
  })
  const text = await answer.text()
  return answer.status === 200 ? undefined : `${answer.status} ${text.slice(0, 200)}`
}

/** One of the gateway benchmark's four workloads, as the scripts that send it plainly (not per target) use it. */
export interface GatewayWorkload {
  readonly name: string
  readonly family: Family
  readonly stream: boolean
  readonly body: string
}

/** The four workloads of bench:gateway, chosen by BENCH_WORKLOADS (prefixes of their names, comma-separated). */
export const gatewayWorkloads = (): ReadonlyArray<GatewayWorkload> => {
  const all: ReadonlyArray<GatewayWorkload> = [
    { name: "chat completion JSON", family: "chat", stream: false, body: chatBody({ stream: false }) },
    { name: "chat completion stream (20 chunks)", family: "chat", stream: true, body: chatBody({ stream: true }) },
    {
      name: "embeddings",
      family: "embeddings",
      stream: false,
      body: JSON.stringify({ model: "text-embedding-ada-002", input: "The quick brown fox jumps over the lazy dog." })
    },
    {
      name: "messages stream (20 chunks)",
      family: "messages",
      stream: true,
      body: JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 100, stream: true, messages: [{ role: "user", content: twentyTokens }] })
    }
  ]
  const chosen = process.env.BENCH_WORKLOADS?.split(",")
  return all.filter((w) => chosen === undefined || chosen.some((prefix) => w.name.startsWith(prefix)))
}

