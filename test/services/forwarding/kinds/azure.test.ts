import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { AzureDeployment } from "../../../../src/domain/deployments"
import { providerA } from "../../../../src/providers/providerA/dialect"
import { azureKind } from "../../../../src/services/forwarding/kinds/azure"
import type { UpstreamCall, UpstreamOperation } from "../../../../src/services/forwarding/kinds/UpstreamKind"
import { SimulatorAddress } from "../../../../src/simulator/server"
import { simulatorTestLayer } from "../../../simulator/harness"
import { decodeAll, sendPrepared } from "./sendPrepared"

const key = "azure-deployment-key"

const deployment = (url: string, apiVersion: string | undefined): AzureDeployment => ({
  kind: "azure",
  name: apiVersion === undefined ? "azure-v1" : "azure-classic",
  route: "provider_a/eu",
  provider: "provider_a",
  region: "eu",
  priority: 0,
  weight: 1,
  models: new Map([["chatgen-4o", "chatgen-4o-prod"]]),
  url,
  simulated: false,
  apiVersion,
  apiKey: Redacted.make(key)
})

const call = (operation: UpstreamOperation, body: Record<string, unknown>, stream = false): UpstreamCall => ({
  operation,
  provider: providerA,
  path: operation === "embeddings" ? "/v1/embeddings" : "/v1/chat/completions",
  body,
  upstreamModel: String(body.model),
  stream,
  headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
  ownKey: Redacted.make("workspace-own-key")
})

const chatBody = { model: "chatgen-4o-prod", messages: [{ role: "user", content: "Hello" }] }
const streamBody = { ...chatBody, stream: true, stream_options: { include_usage: true } }
const modes = [["classic", "2024-10-21"], ["v1", undefined]] as const

describe("the azure kind", () => {
  describe("prepare", () => {
    it.effect("addresses classic deployments by path and api-version, without model; v1 with the deployment as model", () =>
      Effect.gen(function* () {
        const classic = yield* azureKind.prepare(deployment("https://eu.example", "2024-10-21"), call("chat_completions", chatBody))
        expect(classic.url).toBe("https://eu.example/openai/deployments/chatgen-4o-prod/chat/completions?api-version=2024-10-21")
        expect(JSON.parse(classic.body ?? "")).toEqual({ messages: chatBody.messages })
        expect(classic.headers).toMatchObject({ "api-key": key, "content-type": "application/json" })
        expect(classic.headers.traceparent).toBeDefined()
        expect(Object.keys(classic.headers).map((name) => name.toLowerCase())).not.toContain("authorization")
        expect(JSON.stringify(classic.headers)).not.toContain("workspace-own-key")

        const embeddings = yield* azureKind.prepare(deployment("https://eu.example", "2024-10-21"), call("embeddings", { model: "ada-prod", input: "x" }))
        expect(embeddings.url).toBe("https://eu.example/openai/deployments/ada-prod/embeddings?api-version=2024-10-21")

        const v1 = yield* azureKind.prepare(deployment("https://eu.example", undefined), call("embeddings", { model: "ada-prod", input: "x" }))
        expect(v1.url).toBe("https://eu.example/openai/v1/embeddings")
        expect(JSON.parse(v1.body ?? "")).toEqual({ model: "ada-prod", input: "x" })

        for (const apiVersion of ["2024-10-21", undefined]) {
          const responses = yield* azureKind.prepare(deployment("https://eu.example", apiVersion), call("responses", { model: "chatgen-4o-prod", input: "hi" }))
          expect(responses.url).toBe("https://eu.example/openai/v1/responses")
          expect(JSON.parse(responses.body ?? "")).toEqual({ model: "chatgen-4o-prod", input: "hi" })
        }
      })
    )

    it.effect("fails an operation the cloud does not serve for provider_a", () =>
      Effect.gen(function* () {
        const failure = yield* Effect.flip(azureKind.prepare(deployment("https://eu.example", undefined), call("messages", chatBody)))
        expect(failure._tag).toBe("UpstreamFailure")
      })
    )
  })

  describe("errorAnswer", () => {
    const filtered = JSON.stringify({
      error: {
        message: "The prompt was filtered.",
        type: null,
        param: "prompt",
        code: "content_filter",
        status: 400,
        innererror: { code: "ResponsibleAIPolicyViolation", content_filter_result: { violence: { filtered: true, severity: "high" } } }
      }
    })
    const table: ReadonlyArray<readonly [string, number, string, number, unknown]> = [
      ["a content-filter refusal", 400, filtered, 400, { message: "The prompt was filtered.", type: "invalid_request_error", param: "prompt", code: "content_filter" }],
      [
        "a refusal known by its inner code only",
        400,
        JSON.stringify({ error: { message: "Filtered.", innererror: { code: "ResponsibleAIPolicyViolation" } } }),
        400,
        { message: "Filtered.", type: "invalid_request_error", param: "prompt", code: "content_filter" }
      ],
      [
        "a rate limit with a numeric code",
        429,
        JSON.stringify({ error: { code: "429", message: "Please retry after 3 seconds." } }),
        429,
        { message: "Please retry after 3 seconds.", type: "rate_limit_error", param: null, code: "rate_limit_exceeded" }
      ],
      [
        "an access denied",
        401,
        JSON.stringify({ error: { code: "401", message: "Access denied." } }),
        401,
        { message: "Access denied.", type: "authentication_error", param: null, code: "invalid_api_key" }
      ],
      [
        "an unknown deployment",
        404,
        JSON.stringify({ error: { code: "DeploymentNotFound", message: "No such deployment." } }),
        404,
        { message: "No such deployment.", type: "not_found_error", param: null, code: "DeploymentNotFound" }
      ],
      [
        "a validation error with its param",
        400,
        JSON.stringify({ error: { code: "invalid_value", message: "Bad temperature.", param: "temperature", type: "invalid_request_error" } }),
        400,
        { message: "Bad temperature.", type: "invalid_request_error", param: "temperature", code: "invalid_value" }
      ],
      [
        "a server error without a message",
        503,
        JSON.stringify({ error: { code: "ServiceUnavailable" } }),
        503,
        { message: "The upstream refused the request (status 503).", type: "server_error", param: null, code: "ServiceUnavailable" }
      ]
    ]
    for (const [name, status, body, expectedStatus, expectedError] of table) {
      it(`reshapes ${name}`, () => {
        const answer = azureKind.errorAnswer(status, {}, body)
        expect(answer.status).toBe(expectedStatus)
        expect(JSON.parse(answer.body)).toEqual({ error: expectedError })
      })
    }

    it("leaves a body that is not the cloud's error as it came", () => {
      const page = "<html><body>502 Bad Gateway</body></html>"
      expect(azureKind.errorAnswer(502, {}, page)).toEqual({ status: 502, body: page })
    })
  })

  describe("relayEvent and jsonAnswer", () => {
    it("keep what carries no verdict unchanged, unparsed", () => {
      const event = { data: '{"id":"x","choices":[{"delta":{"content":"hi"}}]}' }
      expect(azureKind.relayEvent?.(event)).toBe(event)
      const body = '{"object":"list","data":[]}'
      expect(azureKind.jsonAnswer?.(body, call("embeddings", { model: "m", input: "x" }))).toBe(body)
    })
  })

  layer(simulatorTestLayer({ apiKey: Option.some(Redacted.make(key)) }), { excludeTestServices: true })((it) => {
    for (const [mode, apiVersion] of modes) {
      it.effect(`${mode}: a chat answer, the verdicts removed`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* SimulatorAddress
          const chat = call("chat_completions", chatBody)
          const answer = yield* sendPrepared(yield* azureKind.prepare(deployment(baseUrl, apiVersion), chat))
          expect(answer.status).toBe(200)
          expect(answer.text).toContain("prompt_filter_results")
          expect(answer.text).toContain("content_filter_results")
          const relayed = azureKind.jsonAnswer?.(answer.text, chat) ?? answer.text
          expect(relayed).not.toMatch(/filter_results/)
          const completion = JSON.parse(relayed) as { object: string; choices: Array<{ message: { content: string } }>; usage: unknown }
          expect(completion.object).toBe("chat.completion")
          expect(completion.choices[0]?.message.content.length).toBeGreaterThan(0)
          expect(completion.usage).toBeDefined()
        })
      )

      it.effect(`${mode}: a chat stream, the prompt-filter chunk dropped and the verdicts removed`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* SimulatorAddress
          const answer = yield* sendPrepared(yield* azureKind.prepare(deployment(baseUrl, apiVersion), call("chat_completions", streamBody, true)))
          expect(answer.status).toBe(200)
          expect(answer.headers.get("content-type")).toContain(azureKind.streamContentType)
          const events = decodeAll(azureKind.streamDecoder(64 * 1024), answer.bytes) ?? []
          const first = JSON.parse(events[0]?.data ?? "{}") as { choices: Array<unknown>; prompt_filter_results?: unknown }
          expect(first.choices).toEqual([])
          expect(first.prompt_filter_results).toBeDefined()
          const relayed = events.flatMap((event) => {
            const kept = azureKind.relayEvent?.(event)
            return kept === undefined ? [] : [kept]
          })
          expect(relayed).toHaveLength(events.length - 1)
          expect(relayed.map((event) => event.data).join("\n")).not.toMatch(/filter_results/)
          const chunks = relayed.slice(0, -1).map((event) => JSON.parse(event.data) as { object: string; choices: Array<{ delta: { content?: string } }>; usage?: { completion_tokens: number } | null })
          expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true)
          expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? "")).join("").length).toBeGreaterThan(0)
          expect(chunks[chunks.length - 1]?.usage?.completion_tokens).toBeGreaterThan(0)
          expect(relayed[relayed.length - 1]?.data).toBe("[DONE]")
        })
      )

      it.effect(`${mode}: embeddings`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* SimulatorAddress
          const embeddings = call("embeddings", { model: "text-embedding-3-small-prod", input: ["one", "two"] })
          const answer = yield* sendPrepared(yield* azureKind.prepare(deployment(baseUrl, apiVersion), embeddings))
          expect(answer.status).toBe(200)
          expect(azureKind.jsonAnswer?.(answer.text, embeddings)).toBe(answer.text)
          expect((JSON.parse(answer.text) as { data: Array<unknown> }).data).toHaveLength(2)
        })
      )

      it.effect(`${mode}: the simulator's content-filter refusal, as the chat format's 400`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* SimulatorAddress
          const refused = call("chat_completions", { ...chatBody, messages: [{ role: "user", content: "[simulator fault=content_filter]" }] })
          const answer = yield* sendPrepared(yield* azureKind.prepare(deployment(baseUrl, apiVersion), refused))
          expect(answer.status).toBe(400)
          const reshaped = azureKind.errorAnswer(answer.status, {}, answer.text)
          expect(reshaped.status).toBe(400)
          expect(JSON.parse(reshaped.body)).toEqual({
            error: { message: expect.any(String), type: "invalid_request_error", param: "prompt", code: "content_filter" }
          })
        })
      )
    }

    it.effect("a wrong key is the cloud's 401, reshaped", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* SimulatorAddress
        const wrong = { ...deployment(baseUrl, "2024-10-21"), apiKey: Redacted.make("wrong") }
        const answer = yield* sendPrepared(yield* azureKind.prepare(wrong, call("chat_completions", chatBody)))
        expect(answer.status).toBe(401)
        const reshaped = JSON.parse(azureKind.errorAnswer(answer.status, {}, answer.text).body) as { error: { code: string; type: string } }
        expect(reshaped.error).toMatchObject({ code: "invalid_api_key", type: "authentication_error" })
      })
    )
  })
})
