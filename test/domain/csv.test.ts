import { describe, expect, it } from "@effect/vitest"
import {
  type CsvLayout,
  encodeCell,
  encodeHeader,
  encodeNumberCell,
  encodeRow,
  encodeRows,
  encodeTextCell
} from "../../src/domain/csv"

const layout: CsvLayout = {
  columns: [
    { name: "period_start", kind: "timestamp" },
    { name: "name", kind: "text" },
    { name: "count", kind: "integer" },
    { name: "cost", kind: "decimal" }
  ]
}

describe("encodeTextCell", () => {
  it("leaves plain text alone", () => {
    expect(encodeTextCell("plain text")).toBe("plain text")
    expect(encodeTextCell("")).toBe("")
  })

  it("quotes cells with a comma, a quote, CR or LF and doubles inner quotes", () => {
    expect(encodeTextCell("a,b")).toBe('"a,b"')
    expect(encodeTextCell('say "hi"')).toBe('"say ""hi"""')
    expect(encodeTextCell("line1\nline2")).toBe('"line1\nline2"')
    expect(encodeTextCell("line1\r\nline2")).toBe('"line1\r\nline2"')
  })

  it.each([
    ["=SUM(A1:A2)", "'=SUM(A1:A2)"],
    ["+1", "'+1"],
    ["-1", "'-1"],
    ["@cmd", "'@cmd"],
    ["\tx", "'\tx"]
  ])("neutralises the formula cell %j", (input, expected) => {
    expect(encodeTextCell(input)).toBe(expected)
  })

  it.each([
    [" =SUM(A1:A2)", "' =SUM(A1:A2)"],
    ["   +1", "'   +1"],
    ["\u00a0-1", "'\u00a0-1"],
    ["\u3000@cmd", "'\u3000@cmd"],
    ["＝HYPERLINK(1)", "'＝HYPERLINK(1)"],
    ["＋1", "'＋1"],
    ["－1", "'－1"],
    ["＠cmd", "'＠cmd"],
    [" ＝1", "' ＝1"]
  ])("neutralises a formula behind blanks or in full-width signs: %j", (input, expected) => {
    expect(encodeTextCell(input)).toBe(expected)
  })

  it("leaves blank-led plain text and blanks alone", () => {
    expect(encodeTextCell("  hello")).toBe("  hello")
    expect(encodeTextCell("   ")).toBe("   ")
    expect(encodeTextCell("日本語")).toBe("日本語")
  })

  it("neutralises and quotes a formula starting with CR", () => {
    expect(encodeTextCell("\r=1")).toBe("\"'\r=1\"")
  })

  it("neutralises before quoting", () => {
    expect(encodeTextCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"')
  })

  it("only looks at the first character", () => {
    expect(encodeTextCell("a=b")).toBe("a=b")
    expect(encodeTextCell("x-1")).toBe("x-1")
  })

  it("keeps unicode as is", () => {
    expect(encodeTextCell("Zoë Müller 日本語 🚀")).toBe("Zoë Müller 日本語 🚀")
    expect(encodeTextCell("Ångström, Å")).toBe('"Ångström, Å"')
  })
})

describe("encodeNumberCell", () => {
  it("writes negative numbers unaltered", () => {
    expect(encodeNumberCell(-5)).toBe("-5")
    expect(encodeNumberCell("-0.125")).toBe("-0.125")
    expect(encodeNumberCell(-12n)).toBe("-12")
  })

  it("writes driver strings of numerics unaltered", () => {
    expect(encodeNumberCell("1234567890123456789")).toBe("1234567890123456789")
    expect(encodeNumberCell("0.004500")).toBe("0.004500")
  })

  it("treats non-numeric values in number columns as text", () => {
    expect(encodeNumberCell("-1+2")).toBe("'-1+2")
    expect(encodeNumberCell("1,5")).toBe('"1,5"')
  })

  it("leaves null, undefined and non-finite numbers empty", () => {
    expect(encodeNumberCell(null)).toBe("")
    expect(encodeNumberCell(undefined)).toBe("")
    expect(encodeNumberCell(Number.NaN)).toBe("")
  })
})

describe("encodeCell", () => {
  it("dispatches on the column kind", () => {
    expect(encodeCell("integer", "-3")).toBe("-3")
    expect(encodeCell("text", "-3")).toBe("'-3")
    expect(encodeCell("timestamp", "2026-01-05T00:00:00+01:00")).toBe("2026-01-05T00:00:00+01:00")
    expect(encodeCell("text", 42)).toBe("42")
    expect(encodeCell("timestamp", new Date("2026-01-05T00:00:00Z"))).toBe("2026-01-05T00:00:00.000Z")
  })
})

describe("rows", () => {
  it("writes a CRLF-terminated header", () => {
    expect(encodeHeader(layout)).toBe("period_start,name,count,cost\r\n")
  })

  it("writes the cells of a row in column order, ignoring extra properties", () => {
    const row = { cost: "-1.50", count: 3, name: "=evil", period_start: "2026-01-05T00:00:00+01:00", extra: "x" }
    expect(encodeRow(row, layout)).toBe("2026-01-05T00:00:00+01:00,'=evil,3,-1.50\r\n")
  })

  it("encodes a chunk of rows into one string, with empty cells for missing values", () => {
    const rows = [
      { period_start: "2026-01-05T00:00:00+01:00", name: "Ann, B.", count: "1", cost: null },
      { period_start: "2026-01-06T00:00:00+01:00", name: 'multi\nline "q"', count: 0, cost: "0.000001" }
    ]
    expect(encodeRows(rows, layout)).toBe(
      "2026-01-05T00:00:00+01:00,\"Ann, B.\",1,\r\n" +
        "2026-01-06T00:00:00+01:00,\"multi\nline \"\"q\"\"\",0,0.000001\r\n"
    )
    expect(encodeRows([], layout)).toBe("")
  })
})
