import { Schema } from "effect"

/**
 * The providers the service forwards to, by the name in their paths (`/provider_a/…`), error formats and
 * usage ledger: the one list of them. Each has its record in `providerDialects` (src/providers/provider.ts),
 * which fails to compile when one is missing; every other list of providers (path parameters, the CLI, the
 * settings' own model lists, the console) is made from this one.
 */
export const providerIds = ["provider_a", "provider_b", "provider_c"] as const

export type ProviderId = (typeof providerIds)[number]

/** A provider name at a boundary (a path segment, a command's argument, a stored record). */
export const ProviderIdSchema = Schema.Literal(...providerIds)
