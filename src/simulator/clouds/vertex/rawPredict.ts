// provider_b as the cloud serves it: `…/publishers/anthropic/models/{model}:rawPredict` and `:streamRawPredict`
// (and token counting at `…/models/count-tokens:rawPredict`),
// an OAuth2 bearer token of the simulator's authority, the model in the path and `anthropic_version` in the
// body; then the messages endpoint's own answers, streams and fault controls. Authorization, quota and
// unknown-model refusals come in the cloud's error format `{ error: { code, message, status } }`.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Dialect } from "../../dialect"
import { errorResponse, serveEndpoint, type SimulatedEndpoint } from "../../endpoint"
import { countTokensEndpoint } from "../../providerB/countTokens"
import { messagesEndpoint } from "../../providerB/messages"
import { providerBDialect } from "../../providerB/dialect"
import { SimulatorSettings } from "../../settings"
import { type ErrorKind, SimulatorError } from "../../simulatorError"
import type { SimulatorTokenizer } from "../../tokenizer"
import { VertexAuthority } from "./authority"

/** The one `anthropic_version` the cloud takes in the body. */
export const vertexMessagesVersion = "vertex-2023-10-16"

/** What the wrapped messages endpoint is told the version header was. */
const providerVersion = "2023-06-01"

const pathPattern = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/?]+):(rawPredict|streamRawPredict)(?:\?.*)?$/

/** The refusals the cloud itself answers, before the model sees the request: its own status names. */
const cloudStatuses: Partial<Record<ErrorKind, { readonly code: number; readonly status: string }>> = {
  authentication: { code: 401, status: "UNAUTHENTICATED" },
  permission: { code: 403, status: "PERMISSION_DENIED" },
  not_found: { code: 404, status: "NOT_FOUND" },
  rate_limit: { code: 429, status: "RESOURCE_EXHAUSTED" }
}

export const vertexDialect: Dialect = {
  ...providerBDialect,
  errorStatus: (kind) => cloudStatuses[kind]?.code ?? providerBDialect.errorStatus(kind),
  errorBody: (error, requestId) => {
    const cloud = cloudStatuses[error.kind]
    return cloud === undefined ? providerBDialect.errorBody(error, requestId) : { error: { code: cloud.code, message: error.message, status: cloud.status } }
  },
  missingKey: new SimulatorError({
    kind: "authentication",
    message: "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential."
  }),
  wrongKey: new SimulatorError({
    kind: "authentication",
    message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
  })
}

const invalid = (message: string) => new SimulatorError({ kind: "invalid_request", message })

/** The cloud names a model `name@version`; the provider's own id is `name-version` (what the answer names). */
const providerModelId = (cloudModel: string) => cloudModel.replace("@", "-")

/**
 * A provider_b endpoint behind the cloud's body rules: `anthropic_version` in the body (the counting method may
 * leave it out), the model from the path (generation) or from the body (counting), in the cloud's `name@version`.
 */
const behindTheCloud = (
  endpoint: SimulatedEndpoint<SimulatorTokenizer>,
  pathModel: string | undefined,
  resource: (model: string) => string
): SimulatedEndpoint<SimulatorTokenizer> => ({
  dialect: vertexDialect,
  answer: (body, context) => {
    const { anthropic_version: version, model: bodyModel, ...rest } = body
    if (pathModel !== undefined && bodyModel !== undefined) return Effect.fail(invalid("model: Extra inputs are not permitted"))
    const model = pathModel ?? bodyModel
    if (typeof model !== "string") return Effect.fail(invalid("model: Field required"))
    if (version !== vertexMessagesVersion && !(pathModel === undefined && version === undefined)) {
      return Effect.fail(invalid(`anthropic_version: Input should be '${vertexMessagesVersion}'`))
    }
    return endpoint.answer(
      { ...rest, model: providerModelId(model) },
      { controls: context.controls, header: (name) => (name === "anthropic-version" ? providerVersion : context.header(name)) }
    ).pipe(
      Effect.mapError((error) =>
        error.kind === "not_found" ? new SimulatorError({ kind: "not_found", message: `Publisher Model \`${resource(model)}\` not found.` }) : error
      )
    )
  }
})

const decodedSegment = (segment: string | undefined) => {
  if (segment === undefined) return ""
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

export const serveRawPredict = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const authority = yield* VertexAuthority
  const settings = yield* SimulatorSettings
  const requestId = yield* vertexDialect.newRequestId
  const match = pathPattern.exec(request.url)
  if (match === null) {
    return errorResponse(vertexDialect, new SimulatorError({ kind: "not_found", message: `The URL ${request.url} is not a model method.` }), requestId, 0)
  }
  const token = /^Bearer\s+(.+)$/i.exec(request.headers["authorization"] ?? "")?.[1]?.trim()
  if (token === undefined) return errorResponse(vertexDialect, vertexDialect.missingKey, requestId, 0)
  if (!(yield* authority.accepts(token))) return errorResponse(vertexDialect, vertexDialect.wrongKey, requestId, 0)
  const [, project = "", location = "", model = ""] = match.map(decodedSegment)
  const resource = (named: string) => `projects/${project}/locations/${location}/publishers/anthropic/models/${named}`
  // The counting method is addressed as a model of its own, `count-tokens`, taking the model in the body.
  const endpoint = model === "count-tokens" && match[4] === "rawPredict"
    ? behindTheCloud(countTokensEndpoint, undefined, resource)
    : behindTheCloud(messagesEndpoint, model, resource)
  // The bearer is an OAuth2 token, not one of the simulator's API keys: those are not asked for here.
  return yield* serveEndpoint(endpoint).pipe(
    Effect.provideService(SimulatorSettings, { ...settings, apiKey: Option.none(), acceptedKeys: [] })
  )
})
