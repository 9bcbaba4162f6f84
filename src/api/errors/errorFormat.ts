import { AdminError, adminErrorWire } from "./adminError"
import { ExportError, exportErrorWire } from "./exportError"
import type { Problem } from "../../domain/problem"
import type { ProviderId } from "../../domain/providerId"
import { providers } from "../../providers/provider"
import { ProviderAError } from "../../providers/providerA/error"
import { providerA } from "../../providers/providerA/dialect"
import { ProviderBError } from "../../providers/providerB/error"
import { providerB } from "../../providers/providerB/dialect"
import { ProviderCError } from "../../providers/providerC/error"
import { providerC } from "../../providers/providerC/dialect"

export type { Problem } from "../../domain/problem"

/** The error formats of the service: each public route family answers in its client library's format. */
export type ErrorFormat = "export" | ProviderId | "admin"

/** Which format a path (relative to BASE_PATH) answers in; unknown paths answer like the admin API. */
export const errorFormatOf = (path: string): ErrorFormat => {
  if (path.startsWith("/export/") || path === "/export" || path.startsWith("/downloads/")) return "export"
  return providers.find((provider) => path.startsWith(`/${provider.id}/`))?.id ?? "admin"
}

/** The typed error class of each format. */
export interface FormatErrors {
  readonly export: ExportError
  readonly provider_a: ProviderAError
  readonly provider_b: ProviderBError
  readonly provider_c: ProviderCError
  readonly admin: AdminError
}

/** export's fields, which the admin API's errors carry too. */
const codedFields = (p: Problem) => ({ status: p.status, code: p.code, message: p.message, ...(p.param ? { field: p.param } : {}) })

const render: { readonly [F in ErrorFormat]: (problem: Problem) => FormatErrors[F] } = {
  export: (p) => new ExportError(codedFields(p)),
  provider_a: (p) => new ProviderAError(p),
  provider_b: (p) => new ProviderBError(p),
  provider_c: (p) => new ProviderCError(p),
  admin: (p) => new AdminError(codedFields(p))
}

/** Renders a problem as the typed error of the given format; HttpApi then encodes its exact wire body. */
export const problemAs = <F extends ErrorFormat>(format: F, problem: Problem): FormatErrors[F] =>
  render[format](problem)

/**
 * The wire body of each format, from the same functions the error schemas encode through, but
 * without building the error class (a validated Error with a captured stack) or encoding through
 * the union of status variants: those were a third of the CPU of a refused request.
 */
const wireBody: { readonly [F in ErrorFormat]: (problem: Problem) => unknown } = {
  export: (p) => exportErrorWire(codedFields(p)),
  provider_a: providerA.errorBody,
  provider_b: providerB.errorBody,
  provider_c: providerC.errorBody,
  admin: (p) => adminErrorWire(codedFields(p))
}
/** The status and exact JSON body HttpApi would answer a problem with, for answers written directly. */
export const wireError = (format: ErrorFormat, problem: Problem): { readonly status: number; readonly body: string } => ({
  status: problem.status,
  body: JSON.stringify(wireBody[format](problem))
})
