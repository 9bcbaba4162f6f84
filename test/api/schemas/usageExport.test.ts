import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { UsageExportErrorBody, UsageExportRequest, UsageExportResult } from "../../../src/api/schemas/usageExport"
import { type BadCase, decodeOrFail, issueOf } from "./decodeHelpers"

const request = {
  from: { date: "2026-01-01T00:00:00Z", timezone: "UTC" },
  to: { date: "2026-01-31T23:59:59", timezone: "Europe/Berlin" }
}

describe("UsageExportRequest", () => {
  it("decodes a request and drops unknown fields", () => {
    expect(decodeOrFail(UsageExportRequest, { ...request, format: "csv" })).toEqual(request)
  })

  const badCases: ReadonlyArray<BadCase> = [
    { name: "from missing", body: { to: request.to }, param: "from", message: "Missing required parameter: 'from'." },
    { name: "to missing", body: { from: request.from }, param: "to", message: "Missing required parameter: 'to'." },
    {
      name: "from.date missing",
      body: { ...request, from: { timezone: "UTC" } },
      param: "from.date",
      message: "Missing required parameter: 'from.date'."
    },
    {
      name: "to.timezone missing",
      body: { ...request, to: { date: "2026-01-31T00:00:00" } },
      param: "to.timezone",
      message: "Missing required parameter: 'to.timezone'."
    },
    {
      name: "from.date empty",
      body: { ...request, from: { date: "", timezone: "UTC" } },
      param: "from.date",
      message: "from.date must be a non-empty string, got \"\"."
    },
    {
      name: "to.timezone not a string",
      body: { ...request, to: { date: "2026-01-31T00:00:00", timezone: 1 } },
      param: "to.timezone",
      message: "to.timezone must be a non-empty string, got 1."
    },
    {
      name: "from not an object",
      body: { ...request, from: "2026-01-01" },
      param: "from",
      message: "from: expected an object, got \"2026-01-01\""
    }
  ]

  it.each(badCases)("rejects: $name", ({ body, param, message }) => {
    expect(issueOf(UsageExportRequest, body)).toEqual({ param, message })
  })
})

describe("UsageExportResult and UsageExportErrorBody", () => {
  const result = {
    success: true,
    data: {
      filePath: "models-usage/ws_1/models-usage-2026-01-01-2026-01-31-ab12.csv",
      downloadUrl: "https://example.test/downloads/abc?signature=x",
      dataType: "models",
      recordCount: 0,
      dateRange: { from: "2026-01-01T00:00:00+01:00", to: "2026-01-31T23:59:59+01:00" }
    }
  }

  it("decodes a result", () => {
    expect(Schema.decodeUnknownSync(UsageExportResult)(result)).toEqual(result)
  })

  it.each([
    ["an unknown dataType", { ...result, data: { ...result.data, dataType: "teams" } }],
    ["a fractional recordCount", { ...result, data: { ...result.data, recordCount: 1.5 } }],
    ["a negative recordCount", { ...result, data: { ...result.data, recordCount: -1 } }],
    ["success false", { ...result, success: false }]
  ])("rejects a result with %s", (_, body) => {
    expect(issueOf(UsageExportResult, body)).not.toBe("ok")
  })

  it("decodes error bodies with and without field", () => {
    const withField = {
      success: false,
      error: { code: "INVALID_TIMEZONE", message: "Unknown time zone 'Mars/Base'.", field: "from.timezone" }
    }
    const withoutField = {
      success: false,
      error: { code: "EXPORT_TOO_LARGE", message: "Narrow the date range." }
    }
    expect(Schema.decodeUnknownSync(UsageExportErrorBody)(withField)).toEqual(withField)
    expect(Schema.decodeUnknownSync(UsageExportErrorBody)(withoutField)).toEqual(withoutField)
    expect(issueOf(UsageExportErrorBody, { ...withoutField, success: true })).not.toBe("ok")
  })
})
