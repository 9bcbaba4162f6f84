/**
 * The providers the service forwards to, by the name in their paths (`/provider_a/…`), error formats and
 * usage ledger. Declared here so that pure code (the model catalog, settings) can name them; each has its
 * record in `providers` (src/providers/provider.ts), which fails to compile when one is missing.
 */
export type ProviderId = "provider_a" | "provider_b" | "provider_c"
