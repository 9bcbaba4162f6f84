import ProviderBClient from "@anthropic-ai/sdk"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { VertexAuthority } from "../../../src/simulator/clouds/vertex/authority"
import { SimulatorAddress } from "../../../src/simulator/server"
import { fetchAccessToken, signAssertion } from "../../../src/services/forwarding/kinds/vertexToken"
import { failureOf, simulatorTestLayer } from "../harness"
import { authorizedClient, projectId, region, simulatedServiceAccount, vertexClient } from "./vertexSupport"

const model = "assistantmodel-sonnet-4-5@20250929"
const hello = [{ role: "user" as const, content: "Hello there" }]
const weatherTool = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
}

const baseUrl = Effect.map(SimulatorAddress, (address) => address.baseUrl)

/** POSTs a token request form as it is, answering status and JSON body. */
const postToken = (tokenUri: string, form: Record<string, string>) =>
  Effect.promise(async () => {
    const answer = await fetch(tokenUri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString()
    })
    return { status: answer.status, body: (await answer.json()) as unknown }
  })

const jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

describe("the simulated cloud serving provider_b (vertex)", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("answers rawPredict with a Message of the model named in the path", () =>
      Effect.gen(function* () {
        const sdk = yield* authorizedClient(yield* baseUrl)
        const message = yield* Effect.promise(() => sdk.messages.create({ model, max_tokens: 100, messages: hello }))
        expect(message.type).toBe("message")
        // The answer names the provider's own id of the model.
        expect(message.model).toBe("assistantmodel-sonnet-4-5-20250929")
        expect(message.content[0]?.type).toBe("text")
        expect(message.usage.input_tokens).toBeGreaterThan(0)
        expect(message.usage.output_tokens).toBeGreaterThan(0)
      })
    )

    it.effect("streams through streamRawPredict: the provider's events, the final message and its usage", () =>
      Effect.gen(function* () {
        const sdk = yield* authorizedClient(yield* baseUrl)
        const stream = sdk.messages.stream({ model, max_tokens: 100, messages: hello })
        const texts: Array<string> = []
        stream.on("text", (text) => void texts.push(text))
        const final = yield* Effect.promise(() => stream.finalMessage())
        expect(texts.length).toBeGreaterThan(1)
        expect(final.content[0]).toEqual({ type: "text", text: texts.join("") })
        expect(final.usage.output_tokens).toBeGreaterThan(0)
        expect(final.stop_reason).toBe("end_turn")
      })
    )

    it.effect("calls a tool", () =>
      Effect.gen(function* () {
        const sdk = yield* authorizedClient(yield* baseUrl)
        const message = yield* Effect.promise(() =>
          sdk.messages.create({
            model,
            max_tokens: 200,
            messages: [{ role: "user", content: "Weather in Paris?" }],
            tools: [weatherTool],
            tool_choice: { type: "tool", name: "get_weather" }
          })
        )
        expect(message.stop_reason).toBe("tool_use")
        const call = message.content.find((block) => block.type === "tool_use")
        expect(call).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: expect.any(String) } })
      })
    )

    it.effect("counts tokens at count-tokens:rawPredict, as many as a Message of the same request reports", () =>
      Effect.gen(function* () {
        const sdk = yield* authorizedClient(yield* baseUrl)
        const counted = yield* Effect.promise(() => sdk.messages.countTokens({ model, messages: hello, system: "Be brief." }))
        const answered = yield* Effect.promise(() => sdk.messages.create({ model, max_tokens: 20, messages: hello, system: "Be brief." }))
        expect(counted).toEqual({ input_tokens: answered.usage.input_tokens })
        const unknown = yield* failureOf(() => sdk.messages.countTokens({ model: "assistantmodel-0", messages: hello }))
        expect(unknown).toMatchObject({ status: 404, error: { error: { status: "NOT_FOUND" } } })
      })
    )

    it.effect("refuses a token it did not issue, and none at all, with 401 UNAUTHENTICATED", () =>
      Effect.gen(function* () {
        const url = yield* baseUrl
        const refused = yield* failureOf(() => vertexClient(url, "ya29.never-issued").messages.create({ model, max_tokens: 10, messages: hello }))
        expect(refused).toBeInstanceOf(ProviderBClient.AuthenticationError)
        expect(refused).toMatchObject({ status: 401, error: { error: { code: 401, status: "UNAUTHENTICATED" } } })
        const answer = yield* Effect.promise(() =>
          fetch(`${url}/v1/projects/${projectId}/locations/${region}/publishers/anthropic/models/${model}:rawPredict`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ anthropic_version: "vertex-2023-10-16", max_tokens: 10, messages: hello })
          })
        )
        expect(answer.status).toBe(401)
      })
    )

    it.effect("takes only its anthropic_version, and no model in the body", () =>
      Effect.gen(function* () {
        const url = yield* baseUrl
        const account = yield* simulatedServiceAccount(url)
        const { token } = yield* fetchAccessToken(account)
        const predict = (body: Record<string, unknown>) =>
          Effect.promise(async () => {
            const answer = await fetch(`${url}/v1/projects/${projectId}/locations/${region}/publishers/anthropic/models/${model}:rawPredict`, {
              method: "POST",
              headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
              body: JSON.stringify(body)
            })
            return { status: answer.status, body: (await answer.json()) as unknown }
          })
        const request = { max_tokens: 10, messages: hello }
        expect((yield* predict({ ...request, anthropic_version: "vertex-2023-10-16" })).status).toBe(200)
        const otherVersion = yield* predict({ ...request, anthropic_version: "2023-06-01" })
        expect(otherVersion).toMatchObject({ status: 400, body: { type: "error", error: { type: "invalid_request_error" } } })
        const withModel = yield* predict({ ...request, model, anthropic_version: "vertex-2023-10-16" })
        expect(withModel).toMatchObject({ status: 400, body: { error: { message: "model: Extra inputs are not permitted" } } })
      })
    )

    it.effect("refuses over quota with 429 RESOURCE_EXHAUSTED, and keeps the other fault controls", () =>
      Effect.gen(function* () {
        const sdk = yield* authorizedClient(yield* baseUrl)
        const limited = yield* failureOf(() =>
          sdk.messages.create({ model, max_tokens: 10, messages: [{ role: "user", content: "[simulator fault=rate_limit] hi" }] })
        )
        expect(limited).toBeInstanceOf(ProviderBClient.RateLimitError)
        expect(limited).toMatchObject({ status: 429, error: { error: { code: 429, status: "RESOURCE_EXHAUSTED" } } })
        const broken = yield* failureOf(() =>
          sdk.messages.create({ model, max_tokens: 10, messages: [{ role: "user", content: "[simulator status=500] hi" }] })
        )
        expect(broken).toBeInstanceOf(ProviderBClient.InternalServerError)
        const unknown = yield* failureOf(() => sdk.messages.create({ model: "assistantmodel-0", max_tokens: 10, messages: hello }))
        expect(unknown).toMatchObject({
          status: 404,
          error: { error: { status: "NOT_FOUND", message: `Publisher Model \`projects/${projectId}/locations/${region}/publishers/anthropic/models/assistantmodel-0\` not found.` } }
        })
      })
    )

    it.effect("exchanges the gateway's signed assertion for a token once per request, and refuses others' assertions", () =>
      Effect.gen(function* () {
        const authority = yield* VertexAuthority
        const account = yield* simulatedServiceAccount(yield* baseUrl)
        const before = yield* authority.tokensIssued
        const fetched = yield* fetchAccessToken(account)
        expect(fetched.expiresIn).toBe(3600)
        expect(yield* authority.accepts(fetched.token)).toBe(true)
        expect(yield* authority.tokensIssued).toBe(before + 1)

        const now = Math.floor(Date.now() / 1000)
        const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
        const stranger = { ...account, privateKey: Redacted.make(privateKey.export({ type: "pkcs8", format: "pem" }).toString()) }
        const forged = yield* postToken(account.tokenUri, { grant_type: jwtBearer, assertion: yield* signAssertion(stranger, now) })
        expect(forged).toEqual({ status: 400, body: { error: "invalid_grant", error_description: "Invalid JWT Signature." } })

        const elsewhere = yield* postToken(account.tokenUri, {
          grant_type: jwtBearer,
          assertion: yield* signAssertion({ ...account, tokenUri: "https://oauth2.example/token" }, now)
        })
        expect(elsewhere).toMatchObject({ status: 400, body: { error: "invalid_grant" } })

        const stale = yield* postToken(account.tokenUri, { grant_type: jwtBearer, assertion: yield* signAssertion(account, now - 7200) })
        expect(stale).toMatchObject({ status: 400, body: { error: "invalid_grant" } })

        const otherGrant = yield* postToken(account.tokenUri, { grant_type: "client_credentials" })
        expect(otherGrant).toMatchObject({ status: 400, body: { error: "unsupported_grant_type" } })
        expect(yield* authority.tokensIssued).toBe(before + 1)
      })
    )
  })
})
