import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { adminErrorSchema } from "../../src/api/errors/adminError"
import { exportErrorSchema } from "../../src/api/errors/exportError"
import { providerAErrorSchema } from "../../src/providers/providerA/error"
import { providerBErrorSchema } from "../../src/providers/providerB/error"
import { providerCErrorSchema } from "../../src/providers/providerC/error"
import { type ErrorFormat, errorFormatOf, type Problem, problemAs, wireError } from "../../src/api/errors/errorFormat"

describe("the error format of a path", () => {
  it("follows the route family, downloads answering like the exports that made them", () => {
    expect(errorFormatOf("/export/users")).toBe("export")
    expect(errorFormatOf("/downloads/users-usage/w/file.csv")).toBe("export")
    expect(errorFormatOf("/provider_a/eu/v1/chat/completions")).toBe("provider_a")
    expect(errorFormatOf("/provider_b/us/v1/messages")).toBe("provider_b")
    expect(errorFormatOf("/provider_c/eu/v1/fim/completions")).toBe("provider_c")
    expect(errorFormatOf("/admin/workspaces")).toBe("admin")
    expect(errorFormatOf("/exporter")).toBe("admin")
  })
})

describe("error bodies written directly", () => {
  // What HttpApi encodes from the typed error class: the reference the direct bodies must equal.
  const encoded: { readonly [F in ErrorFormat]: (problem: Problem) => unknown } = {
    export: (p) => Schema.encodeSync(exportErrorSchema)(problemAs("export", p)),
    provider_a: (p) => Schema.encodeSync(providerAErrorSchema)(problemAs("provider_a", p)),
    provider_b: (p) => Schema.encodeSync(providerBErrorSchema)(problemAs("provider_b", p)),
    provider_c: (p) => Schema.encodeSync(providerCErrorSchema)(problemAs("provider_c", p)),
    admin: (p) => Schema.encodeSync(adminErrorSchema)(problemAs("admin", p))
  }
  const problems: ReadonlyArray<Problem> = [
    { status: 400, code: "invalid_value", message: "Expected a number between 0 and 2.", param: "temperature" },
    { status: 401, code: "invalid_api_key", message: "Invalid API key provided." },
    { status: 404, code: "model_not_found", message: "The model 'chatgen-x' does not exist.", param: "model" },
    { status: 413, code: "payload_too_large", message: "The request body is larger than 1048576 bytes." },
    { status: 503, code: "unavailable", message: "The service cannot check API keys right now. Retry shortly." }
  ]

  it("are the exact bodies and statuses HttpApi answers, in every format", () => {
    for (const format of ["export", "provider_a", "provider_b", "provider_c", "admin"] as const) {
      for (const problem of problems) {
        const direct = wireError(format, problem)
        expect(direct.status).toBe(problem.status)
        expect(JSON.parse(direct.body)).toStrictEqual(encoded[format](problem))
      }
    }
  })
})
