import { Either } from "effect"
import { InvalidBetaHeader, ModelNotFound, type Refusal } from "../../domain/refusals"
import type { CheckedRequest } from "./endpointCall"
import { servedOnRoute } from "./servedOnRoute"
import { modelsListPath } from "../../providers/modelsList"
import { providerB } from "../../providers/providerB/dialect"

/** The protocol's beta header: a comma-separated list of feature names. */
const betaFeatures = /^[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*$/

const invalidBeta = new InvalidBetaHeader({ header: "anthropic-beta" })

/** The caller's beta header as it goes upstream (trimmed; none when empty), or its refusal when it is not a list of feature names. */
export const checkedBeta = (beta: string | undefined): Either.Either<string | undefined, InvalidBetaHeader> => {
  const trimmed = beta?.trim()
  if (trimmed === undefined || trimmed === "") return Either.right(undefined)
  return trimmed.length > 1_000 || !betaFeatures.test(trimmed) ? Either.left(invalidBeta) : Either.right(trimmed)
}

/**
 * What every messages-protocol endpoint checks first, in this order: the caller's beta header, then the model.
 * The upstream gets the protocol version this service speaks (`versionHeader`), never the caller's, and the
 * caller's beta header, which turns on the features the body may use: the protocol headers of the call.
 */
export const checkedMessagesCall = (
  context: { readonly basePath: string; readonly versionHeader: Readonly<Record<string, string>> },
  { headers, principal, region, route }: CheckedRequest<unknown>,
  model: string
): Either.Either<Readonly<Record<string, string>>, Refusal> =>
  Either.gen(function*() {
    const passedBeta = yield* checkedBeta(headers["anthropic-beta"])
    if (!servedOnRoute(route, principal, "provider_b", "messages", model)) {
      return yield* Either.left(new ModelNotFound({ model, modelsPath: modelsListPath(context.basePath, providerB, region) }))
    }
    // Object.assign rather than a literal spreading the version header, which makes new maps each call (Node 20).
    return passedBeta === undefined ? context.versionHeader : Object.assign({}, context.versionHeader, { "anthropic-beta": passedBeta })
  })
