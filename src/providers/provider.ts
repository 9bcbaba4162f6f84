import { type ProviderId, providerIds } from "../domain/providerId"
import type { ProviderDialect } from "./providerDialect"
import { providerA } from "./providerA/dialect"
import { providerB } from "./providerB/dialect"
import { providerC } from "./providerC/dialect"

/**
 * The provider registry: every provider's record, by its id. An id of `providerIds` (src/domain/providerId.ts)
 * without its record here, a record under a name that is no id, or a record whose `id` is not its key fails to
 * compile. Adding a provider: its id there, its folder, its line here, its models in the catalog.
 */
export const providerDialects = {
  provider_a: providerA,
  provider_b: providerB,
  provider_c: providerC
} as const satisfies { readonly [Id in ProviderId]: ProviderDialect<Id> }

/** A provider's record, as the forwarding code reads it. */
export type Provider = (typeof providerDialects)[ProviderId]

/** Every provider's record, in the order of `providerIds`. */
export const providers: ReadonlyArray<Provider> = providerIds.map((id) => providerDialects[id])
