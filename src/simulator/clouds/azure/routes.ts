// The azure kind's URL shapes on the simulator's base URL: the classic deployments API
// (/openai/deployments/{deployment}/…?api-version=…) and the /openai/v1 API (the deployment as `model`).
// Both answer as the provider_a simulator does, the deployment standing for its catalog model.
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { chatCompletionModels, embeddingModels } from "../../catalog"
import type { Dialect } from "../../dialect"
import { errorResponse, type SimulatedEndpoint, serveEndpoint } from "../../endpoint"
import { chatCompletionsEndpoint } from "../../providerA/chatCompletions"
import { embeddingsEndpoint } from "../../providerA/embeddings"
import { responsesDialectOf, responsesEndpointOf } from "../../providerA/responses"
import { SimulatorError } from "../../simulatorError"
import type { SimulatorTokenizer } from "../../tokenizer"
import { withFilterResults } from "./contentFilter"
import { azureClassicDialect, azureV1Dialect } from "./dialect"

/**
 * The catalog model a deployment serves: the one of its name, or the longest whose name and a dash begin it
 * (`chatgen-4o-prod` serves chatgen-4o, `chatgen-4o-mini-eu` chatgen-4o-mini). The simulator has no deployments
 * of its own to look up: the name says which model it stands for.
 */
export const modelOfDeployment = (deployment: string, models: ReadonlyMap<string, unknown>): string | undefined => {
  if (models.has(deployment)) return deployment
  let served: string | undefined
  for (const id of models.keys()) {
    if (deployment.startsWith(`${id}-`) && id.length > (served?.length ?? 0)) served = id
  }
  return served
}

const deploymentNotFound = new SimulatorError({
  kind: "not_found",
  code: "DeploymentNotFound",
  message:
    "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."
})

interface Operation<R> {
  readonly endpoint: SimulatedEndpoint<R>
  readonly models: ReadonlyMap<string, unknown>
  /** Whether the content filter's verdicts are added to its answers (chat: yes; embeddings: no). */
  readonly filtered: boolean
  /** Its own conventions under /openai/v1, when they differ from the v1 API's (the Responses stream's error event). */
  readonly v1Dialect?: Dialect
}

const chat: Operation<SimulatorTokenizer> = {
  endpoint: chatCompletionsEndpoint,
  models: chatCompletionModels,
  filtered: true
}
const embeddings: Operation<SimulatorTokenizer> = {
  endpoint: embeddingsEndpoint,
  models: embeddingModels,
  filtered: false
}

/** The Responses API, only under /openai/v1: its errors in the cloud's shape, its stream's in the API's own. */
const responses: Operation<SimulatorTokenizer> = {
  endpoint: responsesEndpointOf(azureV1Dialect),
  models: chatCompletionModels,
  filtered: false,
  v1Dialect: responsesDialectOf(azureV1Dialect)
}

/**
 * An operation served for a deployment: named by the path (classic) or by the body's `model` (v1), replaced by its
 * catalog model before the provider_a simulator answers, the verdicts added to what it answers.
 */
const onDeployment = <R>(operation: Operation<R>, dialect: Dialect, pathDeployment: string | undefined): SimulatedEndpoint<R> => ({
  dialect,
  answer: (body, context) => {
    const deployment = pathDeployment ?? body.model
    if (typeof deployment !== "string") {
      return Effect.fail(
        new SimulatorError({ kind: "invalid_request", message: "Missing required parameter: 'model'.", path: ["model"], code: "missing_required_parameter" })
      )
    }
    const model = modelOfDeployment(deployment, operation.models)
    if (model === undefined) return Effect.fail(deploymentNotFound)
    const answer = operation.endpoint.answer({ ...body, model }, context)
    return operation.filtered ? Effect.map(answer, withFilterResults) : answer
  }
})

/** An error answered before the endpoint runs (the API version), in the cloud's error shape. */
const refuse = (dialect: Dialect, error: SimulatorError, status: number) =>
  Effect.map(dialect.newRequestId, (requestId) => errorResponse(dialect, error, requestId, 0, status))

const apiVersionOf = Effect.map(HttpServerRequest.ParsedSearchParams, (search) => {
  const version = search["api-version"]
  return typeof version === "string" ? version : undefined
})

/** A dated version (`2024-10-21`, `2025-04-01-preview`): the classic API answers 404 without one, 400 for another. */
const classic = <R>(operation: Operation<R>) =>
  Effect.gen(function* () {
    const version = yield* apiVersionOf
    if (version === undefined || version === "") {
      return yield* refuse(azureClassicDialect, new SimulatorError({ kind: "not_found", message: "Resource not found" }), 404)
    }
    if (!/^\d{4}-\d{2}-\d{2}(-preview)?$/.test(version)) {
      return yield* refuse(azureClassicDialect, new SimulatorError({ kind: "invalid_request", message: "API version not supported" }), 400)
    }
    const { deployment } = yield* HttpRouter.params
    return yield* serveEndpoint(onDeployment(operation, azureClassicDialect, deployment))
  })

/** The v1 API needs no version; `v1`, `latest` and `preview` are the ones it accepts. */
const v1 = <R>(operation: Operation<R>) =>
  Effect.gen(function* () {
    const version = yield* apiVersionOf
    if (version !== undefined && !["v1", "latest", "preview"].includes(version)) {
      return yield* refuse(azureV1Dialect, new SimulatorError({ kind: "invalid_request", message: "API version not supported" }), 400)
    }
    return yield* serveEndpoint(onDeployment(operation, operation.v1Dialect ?? azureV1Dialect, undefined))
  })

export const azureRouter = HttpRouter.empty.pipe(
  HttpRouter.post("/openai/deployments/:deployment/chat/completions", classic(chat)),
  HttpRouter.post("/openai/deployments/:deployment/embeddings", classic(embeddings)),
  HttpRouter.post("/openai/v1/chat/completions", v1(chat)),
  HttpRouter.post("/openai/v1/embeddings", v1(embeddings)),
  HttpRouter.post("/openai/v1/responses", v1(responses))
)
