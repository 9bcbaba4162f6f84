import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import type { Principal } from "../domain/principal"
import { adminErrors } from "./errors/adminError"
import { exportErrors } from "./errors/exportError"
import { providerAErrors } from "../providers/providerA/error"
import { providerBErrors } from "../providers/providerB/error"
import { providerCErrors } from "../providers/providerC/error"

/** The authenticated caller of a public endpoint, provided by the group's auth middleware. */
export class CurrentPrincipal extends Context.Tag("CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** `Authorization: Bearer <token>` (scheme case-insensitive), or undefined when absent or another scheme. */
export const bearerToken = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  const match = /^bearer\s+(.+)$/i.exec(headers.authorization?.trim() ?? "")
  return match?.[1]?.trim()
}

const bearer = HttpApiSecurity.bearer
/** The messages protocol's client libraries may send the key in this header instead. */
const xApiKey = HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" })

// An API key is refused with 401 (missing, unknown, revoked, without the scope), 429 (too many failed
// keys from one address) or 503 (the keys cannot be checked): each middleware declares those, in its format.

/** Export endpoints: a key with USAGE_EXPORT_API; failures in the export error format. */
export class ExportAuth extends HttpApiMiddleware.Tag<ExportAuth>()("ExportAuth", {
  provides: CurrentPrincipal,
  failure: exportErrors(401, 429, 503),
  security: { bearer }
}) {}

/** provider_a endpoints: a key with COMPLETION_API. */
export class ProviderAAuth extends HttpApiMiddleware.Tag<ProviderAAuth>()("ProviderAAuth", {
  provides: CurrentPrincipal,
  failure: providerAErrors(401, 429, 503),
  security: { bearer }
}) {}

/** provider_b endpoints: a key with COMPLETION_API, as a bearer token or in x-api-key. */
export class ProviderBAuth extends HttpApiMiddleware.Tag<ProviderBAuth>()("ProviderBAuth", {
  provides: CurrentPrincipal,
  failure: providerBErrors(401, 429, 503),
  security: { bearer, xApiKey }
}) {}

/** provider_c endpoints: a key with COMPLETION_API. */
export class ProviderCAuth extends HttpApiMiddleware.Tag<ProviderCAuth>()("ProviderCAuth", {
  provides: CurrentPrincipal,
  failure: providerCErrors(401, 429, 503),
  security: { bearer }
}) {}

/** Admin API: the operator's ADMIN_TOKEN (401; 429 after too many wrong tokens from one address). */
export class AdminAuth extends HttpApiMiddleware.Tag<AdminAuth>()("AdminAuth", {
  failure: adminErrors(401, 429),
  security: { bearer }
}) {}
