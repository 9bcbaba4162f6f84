import { type Context, Either } from "effect"
import { isKnownModel } from "../../domain/models"
import type { Principal } from "../../domain/principal"
import { InvalidBetaHeader, ModelNotFound, type Refusal } from "../../domain/refusals"
import type { UpstreamTarget, Upstreams } from "../forwarding/Upstreams"
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

/** Where a messages-protocol call goes, and the protocol headers it carries there. */
export interface MessagesCall {
  readonly target: UpstreamTarget
  readonly upstreamHeaders: Readonly<Record<string, string>>
}

/**
 * What every messages-protocol endpoint checks first, in this order: the caller's beta header, the
 * region, the model. The upstream gets the protocol version this service speaks (`versionHeader`),
 * never the caller's, and the caller's beta header, which turns on the features the body may use.
 */
export const checkedMessagesCall = (
  context: { readonly upstreams: Context.Tag.Service<typeof Upstreams>; readonly basePath: string; readonly versionHeader: Readonly<Record<string, string>> },
  principal: Principal,
  region: string,
  model: string,
  beta: string | undefined
): Either.Either<MessagesCall, Refusal> =>
  Either.gen(function*() {
    const passedBeta = yield* checkedBeta(beta)
    const target = yield* context.upstreams.resolve(providerB, region)
    if (!isKnownModel("provider_b", "messages", model, principal.workspace.settings.byokModels)) {
      return yield* Either.left(new ModelNotFound({ model, modelsPath: modelsListPath(context.basePath, providerB, region) }))
    }
    const upstreamHeaders = passedBeta === undefined ? context.versionHeader : { ...context.versionHeader, "anthropic-beta": passedBeta }
    return { target, upstreamHeaders }
  })
