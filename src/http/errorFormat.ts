import { AdminError, adminErrorWire } from "../api/errors/adminError"
import { ExportError, exportErrorWire } from "../api/errors/exportError"
import { ProviderAError, providerAErrorWire } from "../api/errors/providerAError"
import { ProviderBError, providerBErrorType, providerBErrorWire } from "../api/errors/providerBError"
import { ProviderCError, providerCErrorWire } from "../api/errors/providerCError"
import type { ErrorFormat, Problem } from "../domain/problem"
import { providerAErrorType } from "../domain/protocols/providerA"

export type { ErrorFormat, Problem } from "../domain/problem"

/** Which format a path (relative to BASE_PATH) answers in; unknown paths answer like the admin API. */
export const errorFormatOf = (path: string): ErrorFormat => {
  if (path.startsWith("/export/") || path === "/export" || path.startsWith("/downloads/")) return "export"
  if (path.startsWith("/provider_a/")) return "provider_a"
  if (path.startsWith("/provider_b/")) return "provider_b"
  if (path.startsWith("/provider_c/")) return "provider_c"
  return "admin"
}

/** The typed error class of each format. */
export interface FormatErrors {
  readonly export: ExportError
  readonly provider_a: ProviderAError
  readonly provider_b: ProviderBError
  readonly provider_c: ProviderCError
  readonly admin: AdminError
}

/** A format without a param field names the field in its message, as the provider does (`messages[1].role: …`). */
const namingField = (p: Problem): string =>
  p.param === undefined || p.message.toLowerCase().includes(p.param.toLowerCase()) ? p.message : `${p.param}: ${p.message}`

/** provider_a's fields, which provider_c's errors carry too (laid out differently on the wire). */
const chatCompletionFields = (p: Problem) => ({
  status: p.status,
  message: p.message,
  type: providerAErrorType(p.status),
  param: p.param ?? null,
  code: p.code
})

/** export's fields, which the admin API's errors carry too. */
const codedFields = (p: Problem) => ({ status: p.status, code: p.code, message: p.message, ...(p.param ? { field: p.param } : {}) })

/** The fields of each format's error for a problem: the typed class is built from them, and so is the wire body. */
const fieldsOf = {
  export: codedFields,
  provider_a: chatCompletionFields,
  provider_b: (p: Problem) => ({ status: p.status, type: providerBErrorType(p.status), message: namingField(p) }),
  provider_c: chatCompletionFields,
  admin: codedFields
} as const

const render: { readonly [F in ErrorFormat]: (problem: Problem) => FormatErrors[F] } = {
  export: (p) => new ExportError(fieldsOf.export(p)),
  provider_a: (p) => new ProviderAError(fieldsOf.provider_a(p)),
  provider_b: (p) => new ProviderBError(fieldsOf.provider_b(p)),
  provider_c: (p) => new ProviderCError(fieldsOf.provider_c(p)),
  admin: (p) => new AdminError(fieldsOf.admin(p))
}

/** Renders a problem as the typed error of the given format; HttpApi then encodes its exact wire body. */
export const problemAs = <F extends ErrorFormat>(format: F, problem: Problem): FormatErrors[F] =>
  render[format](problem)

/**
 * The wire body of each format, from the same fields and the same mapping the error schemas use,
 * but without building the error class (a validated Error with a captured stack) or encoding
 * through the union of status variants: those were a third of the CPU of a refused request.
 */
const wireBody: { readonly [F in ErrorFormat]: (problem: Problem) => unknown } = {
  export: (p) => exportErrorWire(fieldsOf.export(p)),
  provider_a: (p) => providerAErrorWire(fieldsOf.provider_a(p)),
  provider_b: (p) => providerBErrorWire(fieldsOf.provider_b(p)),
  provider_c: (p) => providerCErrorWire(fieldsOf.provider_c(p)),
  admin: (p) => adminErrorWire(fieldsOf.admin(p))
}

/** The status and exact JSON body HttpApi would answer a problem with, for answers written directly. */
export const wireError = (format: ErrorFormat, problem: Problem): { readonly status: number; readonly body: string } => ({
  status: problem.status,
  body: JSON.stringify(wireBody[format](problem))
})
