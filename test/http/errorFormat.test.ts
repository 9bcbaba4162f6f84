import { describe, expect, it } from "@effect/vitest"
import { errorFormatOf } from "../../src/http/errorFormat"

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
