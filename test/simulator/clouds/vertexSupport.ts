// The simulated cloud's service account as the gateway reads it, and the cloud's client library aimed at the
// simulator with a token from the simulator's token endpoint (fetched as the gateway fetches it).
import { AnthropicVertex } from "@anthropic-ai/vertex-sdk"
import { Effect, Redacted, Schema } from "effect"
import { OAuth2Client } from "google-auth-library"
import type { ServiceAccount } from "../../../src/domain/deployments"
import { fetchAccessToken } from "../../../src/services/forwarding/kinds/vertexToken"

const ServiceAccountFile = Schema.Struct({
  client_email: Schema.String,
  private_key: Schema.String,
  private_key_id: Schema.String,
  token_uri: Schema.String
})

/** The simulator's service-account file (`GET /vertex/service-account.json`), as a deployment holds it. */
export const simulatedServiceAccount = (baseUrl: string): Effect.Effect<ServiceAccount, unknown> =>
  Effect.tryPromise(() => fetch(`${baseUrl}/vertex/service-account.json`).then((answer) => answer.json())).pipe(
    Effect.flatMap(Schema.decodeUnknown(ServiceAccountFile)),
    Effect.map((file) => ({
      clientEmail: file.client_email,
      privateKey: Redacted.make(file.private_key),
      privateKeyId: file.private_key_id,
      tokenUri: file.token_uri
    }))
  )

/** An auth client holding one bearer token (what the library asks for its Authorization header). */
export const tokenClient = (token: string) => {
  const client = new OAuth2Client()
  client.setCredentials({ access_token: token, expiry_date: Date.now() + 3_600_000 })
  return client
}

export const region = "europe-west1"
export const projectId = "simulated-project"

/** AnthropicVertex against the simulator, with the version the cloud takes in the body. */
export const vertexClient = (baseUrl: string, token: string) =>
  new AnthropicVertex({
    region,
    projectId,
    baseURL: `${baseUrl}/v1`,
    authClient: tokenClient(token),
    maxRetries: 0,
    defaultHeaders: { "anthropic-version": "vertex-2023-10-16" }
  })

/** A client with a token fetched from the simulator's token endpoint by the gateway's own exchange. */
export const authorizedClient = (baseUrl: string) =>
  Effect.gen(function* () {
    const account = yield* simulatedServiceAccount(baseUrl)
    const { token } = yield* fetchAccessToken(account)
    return vertexClient(baseUrl, token)
  })
