import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import type { ForwardedEndpoint } from "../providers/forwardedEndpoint"
import type { Provider } from "../providers/provider"
import { providerA } from "../providers/providerA/dialect"
import { chatCompletions, embeddings } from "../providers/providerA/endpoints"
import { providerAErrorSchema } from "../providers/providerA/error"
import { providerB } from "../providers/providerB/dialect"
import { messages } from "../providers/providerB/endpoints"
import { providerBErrorSchema } from "../providers/providerB/error"
import { providerC } from "../providers/providerC/dialect"
import { fimCompletions } from "../providers/providerC/endpoints"
import { providerCErrorSchema } from "../providers/providerC/error"
import { ProviderAAuth, ProviderBAuth, ProviderCAuth } from "./security"

/** Any string: an unknown region is answered with 404 by the service, in the endpoint's format. */
const RegionPath = Schema.Struct({ region: Schema.String })

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

/** provider_a: chat completions and embeddings, in the chat-completions wire format. */
export class ProviderAApi extends HttpApiGroup.make(providerA.id)
  .add(post(chatCompletions))
  .add(post(embeddings))
  .addError(providerAErrorSchema)
  .middleware(ProviderAAuth)
{}

/** provider_b: messages, in the messages wire format. */
export class ProviderBApi extends HttpApiGroup.make(providerB.id)
  .add(post(messages))
  .addError(providerBErrorSchema)
  .middleware(ProviderBAuth)
{}

/** provider_c: fill-in-the-middle code completion, in the FIM wire format. */
export class ProviderCApi extends HttpApiGroup.make(providerC.id)
  .add(post(fimCompletions))
  .addError(providerCErrorSchema)
  .middleware(ProviderCAuth)
{}
