import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import type { Principal } from "../domain/principal"
import { adminErrorSchema } from "./errors/adminError"
import { exportErrorSchema } from "./errors/exportError"
import { providerAErrorSchema } from "../providers/providerA/error"
import { providerBErrorSchema } from "../providers/providerB/error"
import { providerCErrorSchema } from "../providers/providerC/error"

/** The authenticated caller of a public endpoint, provided by the group's auth middleware. */
export class CurrentPrincipal extends Context.Tag("CurrentPrincipal")<CurrentPrincipal, Principal>() {}

const bearer = HttpApiSecurity.bearer
/** The messages protocol's client libraries may send the key in this header instead. */
const xApiKey = HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" })

/** Export endpoints: a key with USAGE_EXPORT_API; failures in the export error format. */
export class ExportAuth extends HttpApiMiddleware.Tag<ExportAuth>()("ExportAuth", {
  provides: CurrentPrincipal,
  failure: exportErrorSchema,
  security: { bearer }
}) {}

/** provider_a endpoints: a key with COMPLETION_API. */
export class ProviderAAuth extends HttpApiMiddleware.Tag<ProviderAAuth>()("ProviderAAuth", {
  provides: CurrentPrincipal,
  failure: providerAErrorSchema,
  security: { bearer }
}) {}

/** provider_b endpoints: a key with COMPLETION_API, as a bearer token or in x-api-key. */
export class ProviderBAuth extends HttpApiMiddleware.Tag<ProviderBAuth>()("ProviderBAuth", {
  provides: CurrentPrincipal,
  failure: providerBErrorSchema,
  security: { bearer, xApiKey }
}) {}

/** provider_c endpoints: a key with COMPLETION_API. */
export class ProviderCAuth extends HttpApiMiddleware.Tag<ProviderCAuth>()("ProviderCAuth", {
  provides: CurrentPrincipal,
  failure: providerCErrorSchema,
  security: { bearer }
}) {}

/** Admin API: the operator's ADMIN_TOKEN. */
export class AdminAuth extends HttpApiMiddleware.Tag<AdminAuth>()("AdminAuth", {
  failure: adminErrorSchema,
  security: { bearer }
}) {}
