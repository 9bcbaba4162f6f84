import { Schema } from "effect"
import { AdminError, adminErrorSchema } from "../api/errors/adminError"
import { ExportError, exportErrorSchema } from "../api/errors/exportError"
import { ProviderAError, providerAErrorSchema } from "../api/errors/providerAError"
import { ProviderBError, providerBErrorSchema, providerBErrorType } from "../api/errors/providerBError"
import { ProviderCError, providerCErrorSchema } from "../api/errors/providerCError"
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

const render: { readonly [F in ErrorFormat]: (problem: Problem) => FormatErrors[F] } = {
  export: (p) =>
    new ExportError({ status: p.status, code: p.code, message: p.message, ...(p.param ? { field: p.param } : {}) }),
  provider_a: (p) =>
    new ProviderAError({
      status: p.status,
      message: p.message,
      type: providerAErrorType(p.status),
      param: p.param ?? null,
      code: p.code
    }),
  provider_b: (p) => new ProviderBError({ status: p.status, type: providerBErrorType(p.status), message: namingField(p) }),
  provider_c: (p) =>
    new ProviderCError({
      status: p.status,
      message: p.message,
      type: providerAErrorType(p.status),
      param: p.param ?? null,
      code: p.code
    }),
  admin: (p) =>
    new AdminError({ status: p.status, code: p.code, message: p.message, ...(p.param ? { field: p.param } : {}) })
}

/** Renders a problem as the typed error of the given format; HttpApi then encodes its exact wire body. */
export const problemAs = <F extends ErrorFormat>(format: F, problem: Problem): FormatErrors[F] =>
  render[format](problem)

const encoders: { readonly [F in ErrorFormat]: (error: FormatErrors[F]) => unknown } = {
  export: Schema.encodeSync(exportErrorSchema),
  provider_a: Schema.encodeSync(providerAErrorSchema),
  provider_b: Schema.encodeSync(providerBErrorSchema),
  provider_c: Schema.encodeSync(providerCErrorSchema),
  admin: Schema.encodeSync(adminErrorSchema)
}

/** The status and exact JSON body HttpApi would answer a problem with, for answers written directly. */
export const wireError = <F extends ErrorFormat>(format: F, problem: Problem): { readonly status: number; readonly body: string } => {
  const error = problemAs(format, problem)
  return { status: error.status, body: JSON.stringify(encoders[format](error)) }
}
