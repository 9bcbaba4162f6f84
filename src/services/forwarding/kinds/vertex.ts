// provider_b on the cloud's model garden (kind `vertex`): `{url}/v1/projects/{project}/locations/{location}/
// publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict` for streams), the body without `model` and
// with the cloud's `anthropic_version`, an OAuth2 bearer token of the deployment's service account. Streams are the
// provider's own SSE events; the cloud's errors are rewritten into the messages format.
import { Effect, Redacted } from "effect"
import type { VertexDeployment } from "../../../domain/deployments"
import { boundedSseDecoder } from "../../../domain/sse"
import { UpstreamFailure } from "../UpstreamClient"
import type { UpstreamCall, UpstreamKind } from "./UpstreamKind"
import { vertexErrorAnswer } from "./vertexErrors"
import { makeTokenCache, type TokenCache } from "./vertexToken"

/** The one `anthropic_version` the cloud takes, in the body (the header's version is not sent). */
export const vertexMessagesVersion = "vertex-2023-10-16"

/** A path segment percent-encoded as the provider's client library does (`@` and `:` stay as they are). */
const segment = (value: string) => value.replace(/[^A-Za-z0-9\-._~!$&'()*+,=:@]+/g, encodeURIComponent)

const modelsRoot = (deployment: VertexDeployment) =>
  `${deployment.url}/v1/projects/${segment(deployment.project)}/locations/${segment(deployment.location)}/publishers/anthropic/models`

/** The protocol headers the cloud takes: the version goes in the body, the caller's credentials never come here. */
const passedHeaders = (headers: UpstreamCall["headers"]): Record<string, string> => {
  const passed: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== "anthropic-version") passed[name] = value
  }
  return passed
}

/** Where a call goes and what its body is, or undefined for an operation the cloud does not serve this way. */
const addressed = (deployment: VertexDeployment, call: UpstreamCall): { readonly url: string; readonly body: Record<string, unknown> } | undefined => {
  const { model: _model, ...rest } = call.body
  switch (call.operation) {
    case "messages":
      return {
        url: `${modelsRoot(deployment)}/${segment(call.upstreamModel)}:${call.stream ? "streamRawPredict" : "rawPredict"}`,
        body: { ...rest, ...(call.stream ? { stream: true } : {}), anthropic_version: vertexMessagesVersion }
      }
    case "count_tokens":
      // The counting method takes the model in the body.
      return {
        url: `${modelsRoot(deployment)}/count-tokens:rawPredict`,
        body: { ...rest, model: call.upstreamModel, anthropic_version: vertexMessagesVersion }
      }
    default:
      return undefined
  }
}

/** Made with its own token cache: each kind value made holds its tokens, nothing is kept at module level. */
export const makeVertexKind: Effect.Effect<UpstreamKind<VertexDeployment>> = Effect.map(
  makeTokenCache(),
  (tokens) => vertexKindWith(tokens)
)

/** The kind over a given token cache (tests count its fetches). */
export const vertexKindWith = (tokens: TokenCache): UpstreamKind<VertexDeployment> => ({
  kind: "vertex",
  secrets: (deployment) => [Redacted.value(deployment.serviceAccount.privateKey)],
  prepare: (deployment, call) => {
    const target = addressed(deployment, call)
    if (target === undefined) {
      return Effect.fail(new UpstreamFailure({ kind: "unreachable", detail: `a vertex deployment does not serve ${call.operation}` }))
    }
    return Effect.map(tokens.accessToken(deployment.serviceAccount), (token) => {
      // Set on the fresh copy rather than spread into a literal, which makes new maps each call (Node 20).
      const headers = passedHeaders(call.headers)
      headers["content-type"] = "application/json"
      headers.authorization = `Bearer ${token}`
      return { url: target.url, method: "POST" as const, headers, body: JSON.stringify(target.body) }
    })
  },
  streamContentType: "text/event-stream",
  streamDecoder: (maxEventBytes) => boundedSseDecoder(maxEventBytes),
  errorAnswer: (status, _headers, body) => vertexErrorAnswer(status, body)
})
