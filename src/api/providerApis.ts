import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import type { ForwardedEndpoint } from "../providers/forwardedEndpoint"
import type { Provider } from "../providers/provider"
import { providerA } from "../providers/providerA/dialect"
import { chatCompletions, embeddings } from "../providers/providerA/endpoints"
import { providerAErrorSchema } from "../providers/providerA/error"
import { providerB } from "../providers/providerB/dialect"
import { countTokens, messages } from "../providers/providerB/endpoints"
import { providerBErrorSchema } from "../providers/providerB/error"
import { providerC } from "../providers/providerC/dialect"
import { fimCompletions } from "../providers/providerC/endpoints"
import { providerCErrorSchema } from "../providers/providerC/error"
import { ProviderAAuth, ProviderBAuth, ProviderCAuth } from "./security"
import * as ProviderAModels from "../providers/providerA/modelsWire"
import * as ProviderBModels from "../providers/providerB/modelsWire"
import * as ProviderCModels from "../providers/providerC/modelsWire"

/** Any string: an unknown region is answered with 404 by the service, in the endpoint's format. */
const RegionPath = Schema.Struct({ region: Schema.String })

const ModelPath = Schema.Struct({ region: Schema.String, model: Schema.String })

const listedModelsDescription = "Served by this service, not forwarded: the models the calling key's workspace may use " +
  "(the catalog, or the workspace's own model list for the provider when it has one)."

/** GET /<provider>/:region/v1/models: the models the caller's workspace may use, in the provider's list format. */
const listModels = <S extends Schema.Schema.Any>(provider: Provider, success: S) =>
  HttpApiEndpoint.get("listModels", `/${provider.id}/:region/v1/models`)
    .setPath(RegionPath)
    .addSuccess(success)
    .annotate(OpenApi.Summary, "List the models this workspace may use")
    .annotate(OpenApi.Description, listedModelsDescription)

/** GET /<provider>/:region/v1/models/:model: one of them (404 in the provider's format for any other). */
const retrieveModel = <S extends Schema.Schema.Any>(provider: Provider, success: S) =>
  HttpApiEndpoint.get("retrieveModel", `/${provider.id}/:region/v1/models/:model`)
    .setPath(ModelPath)
    .addSuccess(success)
    .annotate(OpenApi.Summary, "Retrieve a model this workspace may use")
    .annotate(OpenApi.Description, listedModelsDescription)

/** A forwarded endpoint as HttpApi declares it: POST /<provider>/:region<path>, from its one declaration. */
const post = <const Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI>(
  endpoint: ForwardedEndpoint<Name, P, Payload, PayloadI, Success, SuccessI>
) => {
  const declared = HttpApiEndpoint.post(endpoint.name, `/${endpoint.provider.id}/:region${endpoint.path}`)
    .setPath(RegionPath)
    .setPayload(endpoint.payload)
    .addSuccess(endpoint.success)
  return endpoint.description === undefined ? declared : declared.annotate(OpenApi.Description, endpoint.description)
}

/** provider_a: chat completions and embeddings, in the chat-completions wire format; its models list. */
export class ProviderAApi extends HttpApiGroup.make(providerA.id)
  .add(post(chatCompletions))
  .add(post(embeddings))
  .add(listModels(providerA, ProviderAModels.ModelList))
  .add(retrieveModel(providerA, ProviderAModels.Model))
  .addError(providerAErrorSchema)
  .middleware(ProviderAAuth)
{}

/** provider_b: messages and their token count, in the messages wire format; its models list. */
export class ProviderBApi extends HttpApiGroup.make(providerB.id)
  .add(post(messages))
  .add(post(countTokens))
  .add(listModels(providerB, ProviderBModels.ModelInfosPage).setUrlParams(ProviderBModels.ModelListQuery))
  .add(retrieveModel(providerB, ProviderBModels.ModelInfo))
  .addError(providerBErrorSchema)
  .middleware(ProviderBAuth)
{}

/** provider_c: fill-in-the-middle code completion, in the FIM wire format; its models list. */
export class ProviderCApi extends HttpApiGroup.make(providerC.id)
  .add(post(fimCompletions))
  .add(listModels(providerC, ProviderCModels.ModelList))
  .add(retrieveModel(providerC, ProviderCModels.BaseModelCard))
  .addError(providerCErrorSchema)
  .middleware(ProviderCAuth)
{}
