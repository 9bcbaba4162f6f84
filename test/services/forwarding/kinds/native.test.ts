import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createHash } from "node:crypto"
import type { NativeDeployment } from "../../../../src/domain/deployments"
import { providerA } from "../../../../src/providers/providerA/dialect"
import { providerB } from "../../../../src/providers/providerB/dialect"
import { nativeKind } from "../../../../src/services/forwarding/kinds/native"
import type { UpstreamCall } from "../../../../src/services/forwarding/kinds/UpstreamKind"
import { SimulatorAddress } from "../../../../src/simulator/server"
import { simulatorTestLayer } from "../../../simulator/harness"
import { decodeAll, sendPrepared } from "./sendPrepared"

const deploymentKey = "native-deployment-key"
const ownKey = "workspace-own-key"

/** Asks the simulator to accept this key only (a digest of it in the prompt, not the key itself). */
const expectKey = (key: string) => `[simulator expect_key=${createHash("sha256").update(key).digest("hex").slice(0, 32)}]`

const deployment = (url: string): NativeDeployment => ({
  kind: "native",
  name: "provider-a-eu",
  route: "provider_a/eu",
  provider: "provider_a",
  region: "eu",
  priority: 0,
  weight: 1,
  models: undefined,
  url,
  simulated: false,
  apiKey: Redacted.make(deploymentKey)
})

const chatCall = (content: string, options: { readonly stream?: boolean; readonly ownKey?: string } = {}): UpstreamCall => {
  const body = {
    model: "chatgen-4o",
    messages: [{ role: "user", content }],
    ...(options.stream === true ? { stream: true, stream_options: { include_usage: true } } : {})
  }
  return {
    operation: "chat_completions",
    provider: providerA,
    path: "/v1/chat/completions",
    body,
    upstreamModel: "chatgen-4o",
    stream: options.stream === true,
    headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    ownKey: options.ownKey === undefined ? undefined : Redacted.make(options.ownKey)
  }
}

describe("the native kind", () => {
  it.effect("appends the provider's path to the url and sends the key the provider's way", () =>
    Effect.gen(function* () {
      const prepared = yield* nativeKind.prepare(deployment("https://eu.example"), chatCall("Hello"))
      expect(prepared).toMatchObject({ url: "https://eu.example/v1/chat/completions", method: "POST" })
      expect(prepared.headers).toMatchObject({ authorization: `Bearer ${deploymentKey}`, traceparent: expect.any(String) })
      expect(JSON.parse(prepared.body ?? "")).toEqual(chatCall("Hello").body)
      const messages = yield* nativeKind.prepare(
        { ...deployment("https://eu.example"), provider: "provider_b" },
        { ...chatCall("Hello"), provider: providerB, path: "/v1/messages", headers: { "anthropic-version": "2023-06-01" } }
      )
      expect(messages.headers).toMatchObject({ "x-api-key": deploymentKey, "anthropic-version": "2023-06-01" })
      expect(messages.headers.authorization).toBeUndefined()
    })
  )

  it("passes errors through unchanged", () => {
    const body = '{"error":{"message":"Slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}'
    expect(nativeKind.errorAnswer(429, { "retry-after": "1" }, body)).toEqual({ status: 429, body })
    expect(nativeKind.errorAnswer(502, {}, "<html>bad gateway</html>")).toEqual({ status: 502, body: "<html>bad gateway</html>" })
    expect(nativeKind.jsonAnswer).toBeUndefined()
    expect(nativeKind.relayEvent).toBeUndefined()
  })

  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("reaches the simulator with the deployment's key, or with the workspace's own", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const own = yield* sendPrepared(yield* nativeKind.prepare(deployment(baseUrl), chatCall(`Hello ${expectKey(ownKey)}`, { ownKey })))
        expect(own.status).toBe(200)
        expect((JSON.parse(own.text) as { object: string }).object).toBe("chat.completion")
        const service = yield* sendPrepared(yield* nativeKind.prepare(deployment(baseUrl), chatCall(`Hello ${expectKey(deploymentKey)}`)))
        expect(service.status).toBe(200)
        const wrong = yield* sendPrepared(yield* nativeKind.prepare(deployment(baseUrl), chatCall(`Hello ${expectKey(deploymentKey)}`, { ownKey })))
        expect(wrong.status).toBe(401)
        expect(nativeKind.errorAnswer(wrong.status, {}, wrong.text)).toEqual({ status: 401, body: wrong.text })
      })
    )

    it.effect("decodes the stream into the provider's events", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const answer = yield* sendPrepared(yield* nativeKind.prepare(deployment(baseUrl), chatCall("Stream", { stream: true })))
        expect(answer.headers.get("content-type")).toContain(nativeKind.streamContentType)
        const events = decodeAll(nativeKind.streamDecoder(64 * 1024), answer.bytes) ?? []
        expect(events[events.length - 1]?.data).toBe("[DONE]")
        const usage = JSON.parse(events[events.length - 2]?.data ?? "{}") as { usage?: { completion_tokens: number } }
        expect(usage.usage?.completion_tokens).toBeGreaterThan(0)
        expect(nativeKind.streamDecoder(16).feed(new TextEncoder().encode(`data: ${"x".repeat(64)}`))).toBeUndefined()
      })
    )
  })
})
