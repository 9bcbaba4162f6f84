import { describe, expect, it } from "@effect/vitest"
import { freshRequestId, requestIdFor } from "../../src/http/requestContext"

describe("request ids", () => {
  it("are `req_` and a version 4 UUID without dashes, different each time", () => {
    const ids = Array.from({ length: 1_000 }, freshRequestId)
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("keep the caller's when it is sane", () => {
    expect(requestIdFor("caller-id-1234")).toBe("caller-id-1234")
    expect(requestIdFor("bad id")).toMatch(/^req_[0-9a-f]{32}$/)
  })
})
