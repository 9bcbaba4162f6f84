import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Redacted, TestClock, TestContext } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { createServer } from "node:net"
import { request } from "undici"
import type { ServiceAccount, VertexDeployment } from "../../../../src/domain/deployments"
import { providerB } from "../../../../src/providers/providerB/dialect"
import { UpstreamFailure } from "../../../../src/services/forwarding/UpstreamClient"
import type { PreparedCall, UpstreamCall } from "../../../../src/services/forwarding/kinds/UpstreamKind"
import { makeVertexKind, vertexKindWith } from "../../../../src/services/forwarding/kinds/vertex"
import { type AccessToken, fetchAccessToken, makeTokenCache } from "../../../../src/services/forwarding/kinds/vertexToken"
import { VertexAuthority } from "../../../../src/simulator/clouds/vertex/authority"
import { SimulatorAddress } from "../../../../src/simulator/server"
import { simulatorTestLayer } from "../../../simulator/harness"
import { simulatedServiceAccount } from "../../../simulator/clouds/vertexSupport"

const upstreamModel = "assistantmodel-sonnet-4-5@20250929"

const deploymentOf = (url: string, serviceAccount: ServiceAccount): VertexDeployment => ({
  kind: "vertex",
  name: "vertex-europe-west1",
  route: "provider_b/eu",
  provider: "provider_b",
  region: "eu",
  priority: 0,
  weight: 1,
  models: new Map([["assistantmodel-sonnet-4-5-20250929", upstreamModel]]),
  url,
  simulated: false,
  project: "simulated-project",
  location: "europe-west1",
  serviceAccount
})

const callOf = (stream: boolean, operation: UpstreamCall["operation"] = "messages"): UpstreamCall => ({
  operation,
  provider: providerB,
  path: "/v1/messages",
  body: { model: upstreamModel, max_tokens: 50, messages: [{ role: "user", content: "Hello" }], ...(stream ? { stream: true } : {}) },
  upstreamModel,
  stream,
  headers: { "anthropic-version": "2023-06-01", "anthropic-beta": "tools-2024-05-16" },
  ownKey: undefined
})

/** Sends a prepared call as it is: status, content type and the whole body. */
const send = (prepared: PreparedCall) =>
  Effect.promise(async () => {
    const answer = await request(prepared.url, { method: prepared.method, headers: prepared.headers, body: prepared.body })
    return { status: answer.statusCode, contentType: String(answer.headers["content-type"]), body: Buffer.from(await answer.body.arrayBuffer()) }
  })

const simulated = Effect.gen(function* () {
  const { baseUrl } = yield* SimulatorAddress
  return deploymentOf(baseUrl, yield* simulatedServiceAccount(baseUrl))
})

/** A port nothing listens on. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        server.close(() => resolve(port))
      })
    })
)

describe("the vertex kind", () => {
  layer(simulatorTestLayer(), { excludeTestServices: true })((it) => {
    it.effect("addresses rawPredict with the cloud's body and headers, and the simulated cloud answers 200", () =>
      Effect.gen(function* () {
        const kind = yield* makeVertexKind
        const deployment = yield* simulated
        const prepared = yield* kind.prepare(deployment, callOf(false))
        expect(prepared.url).toBe(
          `${deployment.url}/v1/projects/simulated-project/locations/europe-west1/publishers/anthropic/models/${upstreamModel}:rawPredict`
        )
        expect(prepared.headers).toMatchObject({ "anthropic-beta": "tools-2024-05-16", authorization: expect.stringMatching(/^Bearer ya29\./) })
        expect(Object.keys(prepared.headers).map((name) => name.toLowerCase())).not.toContain("anthropic-version")
        const body = JSON.parse(prepared.body ?? "{}") as Record<string, unknown>
        expect(body).not.toHaveProperty("model")
        expect(body).toMatchObject({ anthropic_version: "vertex-2023-10-16", max_tokens: 50 })
        const answer = yield* send(prepared)
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.body.toString("utf8"))).toMatchObject({ type: "message", role: "assistant" })
      })
    )

    it.effect("streams through streamRawPredict, decoded as the provider's own events", () =>
      Effect.gen(function* () {
        const kind = yield* makeVertexKind
        const prepared = yield* kind.prepare(yield* simulated, callOf(true))
        expect(prepared.url.endsWith(`${upstreamModel}:streamRawPredict`)).toBe(true)
        expect(JSON.parse(prepared.body ?? "{}")).toMatchObject({ stream: true, anthropic_version: "vertex-2023-10-16" })
        const answer = yield* send(prepared)
        expect(answer.status).toBe(200)
        expect(answer.contentType).toContain(kind.streamContentType)
        const events = kind.streamDecoder(1 << 20).feed(answer.body) ?? []
        expect(events.map((event) => event.event)).toEqual(expect.arrayContaining(["message_start", "content_block_delta", "message_delta", "message_stop"]))
        // An event that never ends is refused past the bound.
        expect(kind.streamDecoder(16).feed(Buffer.from(`event: content_block_delta\ndata: ${"x".repeat(64)}`))).toBeUndefined()
      })
    )

    it.effect("counts tokens through the counting method of the simulated cloud", () =>
      Effect.gen(function* () {
        const kind = yield* makeVertexKind
        const messages = callOf(false, "count_tokens")
        const { max_tokens: _maxTokens, ...countBody } = messages.body
        const answer = yield* send(yield* kind.prepare(yield* simulated, { ...messages, path: "/v1/messages/count_tokens", body: countBody }))
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.body.toString("utf8"))).toEqual({ input_tokens: expect.any(Number) })
      })
    )

    it.effect("fetches one token for many calls, concurrent ones sharing the fetch in flight", () =>
      Effect.gen(function* () {
        const authority = yield* VertexAuthority
        const kind = yield* makeVertexKind
        const deployment = yield* simulated
        const before = yield* authority.tokensIssued
        const concurrent = yield* Effect.all(Array.from({ length: 12 }, () => kind.prepare(deployment, callOf(false))), { concurrency: "unbounded" })
        const later = yield* kind.prepare(deployment, callOf(true))
        expect(yield* authority.tokensIssued).toBe(before + 1)
        expect(new Set([...concurrent, later].map((prepared) => prepared.headers["authorization"])).size).toBe(1)
        // Another kind value holds its own tokens.
        yield* Effect.flatMap(makeVertexKind, (other) => other.prepare(deployment, callOf(false)))
        expect(yield* authority.tokensIssued).toBe(before + 2)
      })
    )

    it.effect("a token endpoint that refuses the assertion is an UpstreamFailure that never names the key", () =>
      Effect.gen(function* () {
        const deployment = yield* simulated
        const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
        const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
        const stranger = { ...deployment, serviceAccount: { ...deployment.serviceAccount, privateKey: Redacted.make(pem) } }
        const failure = yield* Effect.flip((yield* makeVertexKind).prepare(stranger, callOf(false)))
        expect(failure).toBeInstanceOf(UpstreamFailure)
        expect(failure.kind).toBe("unreachable")
        expect(failure.detail).toContain("invalid_grant")
        expect(failure.detail).not.toContain(pem.split("\n")[1] ?? "PRIVATE")
        expect(failure.detail).not.toContain(Redacted.value(deployment.serviceAccount.privateKey).split("\n")[1] ?? "PRIVATE")
      })
    )
  })

  it.effect("a token endpoint that cannot be reached is an UpstreamFailure, and the failure is not kept", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
      const account: ServiceAccount = {
        clientEmail: "gateway@simulated-project.iam.gserviceaccount.com",
        privateKey: Redacted.make(privateKey.export({ type: "pkcs8", format: "pem" }).toString()),
        privateKeyId: "key-1",
        tokenUri: `http://127.0.0.1:${port}/token`
      }
      const refused = yield* Effect.exit(fetchAccessToken(account))
      expect(refused).toMatchObject({ _tag: "Failure" })
      const failure = Exit.isFailure(refused) ? refused.cause : undefined
      expect(JSON.stringify(failure)).toContain("unreachable")
      const badKey = yield* Effect.flip(fetchAccessToken({ ...account, privateKey: Redacted.make("not a key") }))
      expect(badKey).toMatchObject({ kind: "unreachable" })

      let attempts = 0
      const flaky = (_account: ServiceAccount): Effect.Effect<AccessToken, UpstreamFailure> =>
        Effect.suspend(() => {
          attempts += 1
          return attempts === 1 ? Effect.fail(new UpstreamFailure({ kind: "unreachable", detail: "token endpoint: down" })) : Effect.succeed({ token: "t2", expiresIn: 3600 })
        })
      const kind = vertexKindWith(yield* makeTokenCache(flaky))
      const deployment = deploymentOf("http://127.0.0.1:1", account)
      expect(yield* Effect.flip(kind.prepare(deployment, callOf(false)))).toMatchObject({ kind: "unreachable" })
      expect((yield* kind.prepare(deployment, callOf(false))).headers["authorization"]).toBe("Bearer t2")
      expect(attempts).toBe(2)
    }), { timeout: 20_000 })

  it.effect("keeps a token until five minutes before it expires, then fetches another", () =>
    Effect.gen(function* () {
      let fetched = 0
      const counting = (_account: ServiceAccount): Effect.Effect<AccessToken> =>
        Effect.sync(() => ({ token: `t${++fetched}`, expiresIn: 3600 }))
      const kind = vertexKindWith(yield* makeTokenCache(counting))
      const account: ServiceAccount = { clientEmail: "a@b", privateKey: Redacted.make("unused"), privateKeyId: undefined, tokenUri: "http://127.0.0.1:1/token" }
      const deployment = deploymentOf("http://127.0.0.1:1", account)
      const bearer = Effect.map(kind.prepare(deployment, callOf(false)), (prepared) => prepared.headers["authorization"])
      expect(yield* bearer).toBe("Bearer t1")
      yield* TestClock.adjust("54 minutes")
      expect(yield* bearer).toBe("Bearer t1")
      yield* TestClock.adjust("1 minute")
      expect(yield* bearer).toBe("Bearer t2")
      expect(yield* bearer).toBe("Bearer t2")
      // Another service account has its own token.
      const other = deploymentOf("http://127.0.0.1:1", { ...account, clientEmail: "c@d" })
      expect((yield* kind.prepare(other, callOf(false))).headers["authorization"]).toBe("Bearer t3")
      expect(fetched).toBe(3)
    }).pipe(Effect.provide(TestContext.TestContext)))

  it.effect("count_tokens goes to the counting method with the model in the body; other operations are refused", () =>
    Effect.gen(function* () {
      const kind = vertexKindWith(yield* makeTokenCache(() => Effect.succeed({ token: "t", expiresIn: 3600 })))
      const deployment = deploymentOf("https://europe-west1-aiplatform.googleapis.com", {
        clientEmail: "a@b",
        privateKey: Redacted.make("unused"),
        privateKeyId: undefined,
        tokenUri: "http://127.0.0.1:1/token"
      })
      const counting = yield* kind.prepare(deployment, callOf(false, "count_tokens"))
      expect(counting.url).toBe(
        "https://europe-west1-aiplatform.googleapis.com/v1/projects/simulated-project/locations/europe-west1/publishers/anthropic/models/count-tokens:rawPredict"
      )
      expect(JSON.parse(counting.body ?? "{}")).toMatchObject({ model: upstreamModel, anthropic_version: "vertex-2023-10-16" })
      expect(yield* Effect.flip(kind.prepare(deployment, callOf(false, "chat_completions")))).toBeInstanceOf(UpstreamFailure)
    }))
})

describe("the vertex kind's error answers", () => {
  const cloud = (code: number, status: string, message = "m") => JSON.stringify({ error: { code, message, status } })
  const messagesError = (type: string, message = "m") => ({ type: "error", error: { type, message } })
  const table: ReadonlyArray<readonly [number, string, number, ReturnType<typeof messagesError>]> = [
    [429, cloud(429, "RESOURCE_EXHAUSTED"), 429, messagesError("rate_limit_error")],
    [401, cloud(401, "UNAUTHENTICATED"), 401, messagesError("authentication_error")],
    [403, cloud(403, "PERMISSION_DENIED"), 403, messagesError("permission_error")],
    [404, cloud(404, "NOT_FOUND"), 404, messagesError("not_found_error")],
    [400, cloud(400, "INVALID_ARGUMENT"), 400, messagesError("invalid_request_error")],
    [503, cloud(503, "UNAVAILABLE"), 503, messagesError("overloaded_error")],
    [500, cloud(500, "INTERNAL"), 500, messagesError("api_error")],
    [504, cloud(504, "DEADLINE_EXCEEDED"), 504, messagesError("api_error")],
    // The streaming methods answer a list of errors.
    [429, JSON.stringify([JSON.parse(cloud(429, "RESOURCE_EXHAUSTED"))]), 429, messagesError("rate_limit_error")],
    [502, "<html>Bad Gateway</html>", 502, messagesError("api_error", "The upstream answered 502.")],
    [529, "", 529, messagesError("overloaded_error", "The upstream answered 529.")]
  ]
  it.effect("renders the cloud's errors in the messages format", () =>
    Effect.gen(function* () {
      const kind = yield* makeVertexKind
      for (const [status, body, expectedStatus, expectedBody] of table) {
        const answer = kind.errorAnswer(status, {}, body)
        expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({ status: expectedStatus, body: expectedBody })
      }
    }))

  it.effect("passes the messages format through as it is", () =>
    Effect.gen(function* () {
      const kind = yield* makeVertexKind
      const body = JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: too large" }, request_id: "req_1" })
      expect(kind.errorAnswer(400, {}, body)).toEqual({ status: 400, body })
      const overloaded = JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
      expect(kind.errorAnswer(529, {}, overloaded)).toEqual({ status: 529, body: overloaded })
    }))
})
