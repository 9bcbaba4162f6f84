import { Option, type Schema, SchemaAST } from "effect"
import type { ErrorStatus, Problem } from "../../domain/problem"
import { type ProviderId, providerIds } from "../../domain/providerId"
import { providerDialects } from "../../providers/provider"
import { ProviderAErrorBody } from "../../providers/providerA/chatCompletionsWire"
import { ProviderBErrorBody } from "../../providers/providerB/messagesWire"
import { ProviderCErrorBody } from "../../providers/providerC/fimWire"
import { AdminErrorBody, adminErrorWire } from "../errors/adminError"
import { ConsoleErrorBody, consoleErrorWire } from "../errors/consoleError"
import { exportErrorWire } from "../errors/exportError"
import { UsageExportErrorBody } from "../schemas/usageExport"

/** One error format as the document shows it: its wire schema (a component) and its body for a problem. */
export interface DocumentedErrorFormat {
  readonly wire: Schema.Schema.AnyNoContext
  readonly body: (problem: Problem) => unknown
  /** The code its 401 carries (API keys, the admin token and the session cookie are refused in their own words). */
  readonly unauthorized: Pick<Problem, "code" | "message">
}

const coded = (p: Problem) => ({ code: p.code, message: p.message, ...(p.param ? { field: p.param } : {}) })
const apiKeyRefused = { code: "invalid_api_key", message: "The API key is missing, unknown or revoked." }

/** Each provider's error body schema (a provider without one fails to compile). */
const providerErrorWires: { readonly [Id in ProviderId]: Schema.Schema.AnyNoContext } = {
  provider_a: ProviderAErrorBody,
  provider_b: ProviderBErrorBody,
  provider_c: ProviderCErrorBody
}

/** Every error format of the service, keyed by its wire schema's component name. */
const formats: ReadonlyArray<DocumentedErrorFormat> = [
  ...providerIds.map((id) => ({ wire: providerErrorWires[id], body: providerDialects[id].errorBody, unauthorized: apiKeyRefused })),
  { wire: UsageExportErrorBody, body: (p) => exportErrorWire(coded(p)), unauthorized: apiKeyRefused },
  {
    wire: AdminErrorBody,
    body: (p) => adminErrorWire(coded(p)),
    unauthorized: { code: "unauthorized", message: "A valid admin token is required." }
  },
  {
    wire: ConsoleErrorBody,
    body: (p) => consoleErrorWire(coded(p)),
    unauthorized: { code: "unauthenticated", message: "Sign in first: no valid session." }
  }
]

/** The component name of a schema: its identifier annotation (HttpApi's OpenAPI generator names components so). */
export const componentName = (schema: Schema.Schema.AnyNoContext): string | undefined =>
  Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(schema.ast))

export const errorFormatsByComponent: ReadonlyMap<string, DocumentedErrorFormat> = new Map(
  formats.flatMap((format) => {
    const name = componentName(format.wire)
    return name === undefined ? [] : [[name, format] as const]
  })
)

/** What a refusal of each status typically says (the 401 in the format's own words). */
const typical: { readonly [S in ErrorStatus]?: Pick<Problem, "code" | "message" | "param"> } = {
  400: { code: "invalid_value", message: "The request is invalid: the field named is wrong.", param: "name" },
  403: { code: "forbidden", message: "These credentials do not allow this." },
  404: { code: "not_found", message: "Not found." },
  409: { code: "conflict", message: "This conflicts with the current state." },
  410: { code: "gone", message: "This link was used or has expired." },
  413: { code: "request_too_large", message: "The request body is larger than the limit of 1048576 bytes." },
  415: {
    code: "unsupported_media_type",
    message: "Content-Type 'text/plain' is not supported: send the body as JSON with Content-Type: application/json."
  },
  429: { code: "rate_limit_exceeded", message: "Rate limit reached. Retry in 12 s, or ask for a higher limit." },
  500: { code: "internal_error", message: "The service failed to complete the request. Retry shortly." },
  502: { code: "upstream_error", message: "The upstream provider failed (status 500)." },
  503: { code: "unavailable", message: "The database is unavailable. Retry shortly." },
  504: { code: "upstream_timeout", message: "The upstream provider did not answer in time." },
  529: { code: "overloaded", message: "The upstream provider is overloaded. Retry shortly." }
}

/** An example body of a status in a format: exactly what the service writes for such a problem. */
export const errorExample = (format: DocumentedErrorFormat, status: number): unknown => {
  const words = status === 401
    ? format.unauthorized
    : typical[status as ErrorStatus] ?? { code: "upstream_refused", message: `The upstream provider refused the request (status ${status}).` }
  return format.body({ status, ...words })
}
