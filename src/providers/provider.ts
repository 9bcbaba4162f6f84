import { Schema } from "effect"
import type { ProviderId } from "../domain/providerId"
import type { ProviderDialect } from "./providerDialect"
import { providerA } from "./providerA/dialect"
import { providerB } from "./providerB/dialect"
import { providerC } from "./providerC/dialect"

/**
 * Every provider the service forwards to. Adding one: its id (src/domain/providerId.ts), its folder, its line
 * here, its models in the catalog.
 */
export const providers = [providerA, providerB, providerC] as const satisfies ReadonlyArray<ProviderDialect<ProviderId>>

/** A provider's record, as the forwarding code reads it. */
export type Provider = (typeof providers)[number]

/** Fails to compile when an id of src/domain/providerId.ts has no record in `providers`. */
export const everyProviderIdListed: [Exclude<ProviderId, Provider["id"]>] extends [never] ? true : false = true

/** A provider name at a boundary (a path segment, a stored record). */
export const ProviderIdSchema = Schema.Literal(...providers.map((provider) => provider.id))

