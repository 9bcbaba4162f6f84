import { describe, expect, it } from "@effect/vitest"
import {
  EXPORT_KINDS,
  EXPORT_LAYOUT_VERSION,
  exportFilePath,
  exportLayouts,
  layoutMarkdown,
  userIdentifyingColumns
} from "../../src/domain/exportLayouts"

describe("export layouts", () => {
  it.each(EXPORT_KINDS)("%s starts with the period columns and has unique column names", (kind) => {
    const names = exportLayouts[kind].columns.map((column) => column.name)
    expect(names.slice(0, 2)).toEqual(["period_start", "period_end"])
    expect(new Set(names).size).toBe(names.length)
    expect(exportLayouts[kind].kind).toBe(kind)
    // The models export is at v4 (byok, clamped, then deployment added at its end); the others at the first version.
    expect(exportLayouts[kind].version).toBe(kind === "models" ? "v4" : EXPORT_LAYOUT_VERSION)
  })

  it("keeps the models export's v3 columns in their order and adds deployment after them", () => {
    expect(exportLayouts.models.columns.map((column) => column.name)).toEqual([
      "period_start", "period_end", "source", "model", "provider", "region", "requests", "failed_requests",
      "input_tokens", "output_tokens", "cost_usd", "latency_avg_ms", "byok", "clamped", "deployment"
    ])
    expect(exportLayouts.models.columns.at(-1)).toMatchObject({ name: "deployment", kind: "text" })
  })

  it("marks only the users export's identity columns as user-identifying", () => {
    expect(userIdentifyingColumns("users").map((column) => [column.name, column.identifies])).toEqual([
      ["user_id", "id"],
      ["user_email", "email"],
      ["user_name", "name"]
    ])
    for (const kind of EXPORT_KINDS.filter((k) => k !== "users")) {
      expect(userIdentifyingColumns(kind)).toEqual([])
    }
  })

  it("renders a Markdown table with one line per column", () => {
    const markdown = layoutMarkdown("workflows")
    const tableLines = markdown.split("\n").filter((line) => line.startsWith("| "))
    expect(tableLines).toHaveLength(exportLayouts.workflows.columns.length + 1)
    expect(markdown).toContain("| 1 | `period_start` | timestamp |")
    expect(markdown).toContain("`duration_p95_ms` | integer |")
    expect(layoutMarkdown("users")).toMatch(/`user_email` \| text \| .* \| yes \|/)
  })

  it("builds the spec's file path with the layout version in the suffix", () => {
    expect(
      exportFilePath({
        kind: "models",
        workspaceId: "ws-1",
        fromDate: "20260105",
        toDate: "20260112",
        uniqueId: "abc123"
      })
    ).toBe(`models-usage/ws-1/models-usage-20260105-20260112-v4-abc123.csv`)
    expect(exportFilePath({ kind: "users", workspaceId: "ws-1", fromDate: "20260105", toDate: "20260112", uniqueId: "abc123" }))
      .toBe(`users-usage/ws-1/users-usage-20260105-20260112-${EXPORT_LAYOUT_VERSION}-abc123.csv`)
  })
})
