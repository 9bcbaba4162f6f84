import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { builtInCatalog } from "../domain/models"
import { catalogFamily } from "../domain/rateLimits"
import type { ForwardedEndpoint } from "../providers/forwardedEndpoint"
import type { ProviderId } from "../domain/providerId"
import type { Provider } from "../providers/provider"
import { providerA } from "../providers/providerA/dialect"
import { chatCompletions, embeddings, responses } from "../providers/providerA/endpoints"
import { providerAErrors } from "../providers/providerA/error"
import { providerB } from "../providers/providerB/dialect"
import { countTokens, messages } from "../providers/providerB/endpoints"
import { providerBErrors } from "../providers/providerB/error"
import { messagesProtocol } from "../providers/providerB/protocol"
import { providerC } from "../providers/providerC/dialect"
import { fimCompletions } from "../providers/providerC/endpoints"
import { providerCErrors } from "../providers/providerC/error"
import * as ProviderAModels from "../providers/providerA/modelsWire"
import * as ProviderBModels from "../providers/providerB/modelsWire"
import * as ProviderCModels from "../providers/providerC/modelsWire"
import { type ErrorStatus, isErrorStatus } from "../providers/statusVariants"
import { Choices, type DocumentedFamily, OperationFamily, PassesUpstreamRefusals, RequestExample } from "./openapi/annotations"
import { families, forwardedFamilies } from "./openapi/families"
import { ProviderAAuth, ProviderBAuth, ProviderCAuth } from "./security"

/** Any string: an unknown region is answered with 404 by the service, in the endpoint's format (the enum is documentation). */
const RegionPath = Schema.Struct({ region: Schema.String })

/** Each provider's error format, at the statuses an operation declares. */
const errorsOf = { provider_a: providerAErrors, provider_b: providerBErrors, provider_c: providerCErrors } as const satisfies Record<
  ProviderId,
  unknown
>

/**
 * What a forwarded endpoint answers itself, beyond its key's refusals (the auth middleware's): a body
 * refused (400, 413, 415), the workspace's own provider key refused (403), an unknown region or model
 * (404), a rate limit (429), the upstream failing, busy or slow (502, 503, 504). Other upstream
 * refusals pass through with their status (documented as 4XX).
 */
const forwardedStatuses: ReadonlyArray<ErrorStatus> = [400, 403, 404, 413, 415, 429, 502, 503, 504]

/** What the document says of a forwarded endpoint beyond its schemas. */
export interface ForwardedDoc<PayloadI> {
  readonly summary: string
  readonly description: string
  /** A request that works as is, for the given model of the catalog (its family's first). */
  readonly example: (model: string) => PayloadI
  /** Upstream 5xx statuses the protocol passes on (its clients know them). */
  readonly passedServerStatuses?: ReadonlyArray<ErrorStatus>
}

/**
 * A forwarded endpoint as HttpApi declares it: POST /<provider>/:region<path>, from its one
 * declaration; documented in its family (tag, models and regions from the catalog, errors in its
 * provider's format).
 */
const post = <const Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI>(
  endpoint: ForwardedEndpoint<Name, P, Payload, PayloadI, Success, SuccessI>,
  doc: ForwardedDoc<PayloadI>
) => {
  const family = catalogFamily(endpoint.family)
  const models = family === undefined ? [] : builtInCatalog.ids(endpoint.provider.id, family)
  const facts = Context.make(Choices, { path: { region: endpoint.provider.regions }, body: { model: models } }).pipe(
    Context.add(RequestExample, doc.example(models[0] ?? "")),
    Context.add(PassesUpstreamRefusals, true),
    (context) => (endpoint.family === "usage_export" ? context : Context.add(context, OperationFamily, forwardedFamilies[endpoint.family]))
  )
  return HttpApiEndpoint.post(endpoint.name, `/${endpoint.provider.id}/:region${endpoint.path}`)
    .setPath(RegionPath)
    .setPayload(endpoint.payload)
    .addSuccess(endpoint.success)
    .addError(errorsOf[endpoint.provider.id](...forwardedStatuses, ...(doc.passedServerStatuses ?? [])))
    .annotateContext(OpenApi.annotations({
      summary: doc.summary,
      description: endpoint.description === undefined ? doc.description : `${doc.description}\n\n${endpoint.description}`
    }))
    .annotateContext(facts)
}

const ModelPath = Schema.Struct({ region: Schema.String, model: Schema.String })

const listedModelsDescription = "Served by this service, not forwarded: the models the calling key's workspace may use " +
  "(the catalog, or the workspace's own model list for the provider when it has one)."

/**
 * The models lists are documented in the family of the provider's first endpoint, whose error format
 * they share: one tag, one error format.
 */
const listFamilies = { provider_a: families.chatCompletions, provider_b: families.messages, provider_c: families.fim } as const satisfies Record<
  ProviderId,
  DocumentedFamily
>

/** The catalog's models of a provider, whatever their family: what its list may hold. */
const providerModelIds = (provider: Provider): ReadonlyArray<string> =>
  (["chat_completions", "embeddings", "messages", "fim"] as const).flatMap((family) => builtInCatalog.ids(provider.id, family))

/**
 * GET /<provider>/:region/v1/models: the models the caller's workspace may use, in the provider's list
 * format; an unknown region is 404 (and the statuses given, for the list's own parameters).
 */
const listModels = <S extends Schema.Schema.Any>(provider: Provider, success: S, ...statuses: ReadonlyArray<ErrorStatus>) =>
  HttpApiEndpoint.get("listModels", `/${provider.id}/:region/v1/models`)
    .setPath(RegionPath)
    .addSuccess(success)
    .addError(errorsOf[provider.id](404, ...statuses))
    .annotateContext(OpenApi.annotations({ summary: "List the models this workspace may use", description: listedModelsDescription }))
    .annotateContext(Context.make(OperationFamily, listFamilies[provider.id]).pipe(Context.add(Choices, { path: { region: provider.regions } })))

/** GET /<provider>/:region/v1/models/:model: one of them (404 in the provider's format for any other). */
const retrieveModel = <S extends Schema.Schema.Any>(provider: Provider, success: S) =>
  HttpApiEndpoint.get("retrieveModel", `/${provider.id}/:region/v1/models/:model`)
    .setPath(ModelPath)
    .addSuccess(success)
    .addError(errorsOf[provider.id](404))
    .annotateContext(OpenApi.annotations({ summary: "Retrieve a model this workspace may use", description: listedModelsDescription }))
    .annotateContext(
      Context.make(OperationFamily, listFamilies[provider.id]).pipe(
        Context.add(Choices, { path: { region: provider.regions, model: providerModelIds(provider) } })
      )
    )

const chatExample = (model: string) => ({
  model,
  messages: [
    { role: "system" as const, content: "You answer in one short sentence." },
    { role: "user" as const, content: "What is a workspace-scoped API key?" }
  ]
})

/** provider_a: chat completions and embeddings, in the chat-completions wire format. */
export class ProviderAApi extends HttpApiGroup.make(providerA.id)
  .add(post(chatCompletions, {
    summary: "Create a chat completion",
    description: "Forwards a chat completion request to provider_a in the region, with the workspace's key (or the " +
      "service's), after checking the model against the catalog (or the workspace's own list), the output limit, " +
      "the context length and the workspace's rate limits. Usage and cost are recorded. The answer is provider_a's.",
    example: chatExample
  }))
  .add(post(embeddings, {
    summary: "Create embeddings",
    description: "Forwards an embeddings request (a string or a list of strings, each at most 8,192 tokens) to " +
      "provider_a in the region. Usage is recorded; the answer is provider_a's list of vectors.",
    example: (model) => ({ model, input: ["The quick brown fox", "jumps over the lazy dog"] })
  }))
  .add(post(responses, {
    summary: "Create a response",
    description: "Forwards a Responses API request to provider_a in the region, stateless (sent upstream with " +
      "`store: false`; `store: true`, `previous_response_id`, `conversation`, `background: true` and the hosted tools " +
      "are 400 naming the field), after checking the model against the chat models of the catalog (or the workspace's " +
      "own list), `max_output_tokens`, the context length and the workspace's `responses` rate limits. Usage and cost " +
      "are recorded. The answer is provider_a's.",
    example: (model) => ({ model, instructions: "You answer in one short sentence.", input: "What is a workspace-scoped API key?" })
  }))
  .add(listModels(providerA, ProviderAModels.ModelList))
  .add(retrieveModel(providerA, ProviderAModels.Model))
  .middleware(ProviderAAuth)
{}

/** provider_b: messages and their token count, in the messages wire format; its models list. */
export class ProviderBApi extends HttpApiGroup.make(providerB.id)
  .add(post(messages, {
    summary: "Create a message",
    description: "Forwards a messages request to provider_b in the region, after checking the model against the " +
      "catalog (or the workspace's own list), `max_tokens` against the model's output limit and the workspace's " +
      "rate limits. `anthropic-beta` is passed on. Usage and cost are recorded. The answer is provider_b's.",
    example: (model) => ({ model, max_tokens: 1024, messages: [{ role: "user" as const, content: "Hello: who are you?" }] }),
    passedServerStatuses: messagesProtocol.passedServerStatuses?.filter(isErrorStatus)
  }))
  .add(post(countTokens, {
    summary: "Count the tokens of a message",
    description: "Forwards a token count to provider_b in the region: the input tokens a messages request with this " +
      "model, system prompt, messages and tools would take. It counts as one request against the workspace's messages " +
      "limits, reserves no tokens and writes no usage record.",
    example: (model) => ({ model, messages: [{ role: "user" as const, content: "Hello: who are you?" }] })
  }))
  // An unknown paging cursor, or both cursors at once, is 400.
  .add(listModels(providerB, ProviderBModels.ModelInfosPage, 400).setUrlParams(ProviderBModels.ModelListQuery))
  .add(retrieveModel(providerB, ProviderBModels.ModelInfo))
  .middleware(ProviderBAuth)
{}

/** provider_c: fill-in-the-middle code completion, in the FIM wire format; its models list. */
export class ProviderCApi extends HttpApiGroup.make(providerC.id)
  .add(post(fimCompletions, {
    summary: "Create a fill-in-the-middle completion",
    description: "Forwards a FIM request (the code before the cursor as `prompt`, after it as `suffix`) to provider_c " +
      "in the region, after checking the model and the context length (prompt and suffix estimated at four " +
      "characters a token) and the workspace's rate limits. Usage and cost are recorded.",
    example: (model) => ({ model, prompt: "def fibonacci(n):\n    ", suffix: "\n\nprint(fibonacci(10))", max_tokens: 64 })
  }))
  .add(listModels(providerC, ProviderCModels.ModelList))
  .add(retrieveModel(providerC, ProviderCModels.BaseModelCard))
  .middleware(ProviderCAuth)
{}
