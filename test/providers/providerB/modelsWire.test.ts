import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { WorkspaceModel } from "../../../src/domain/models"
import { modelPageOf } from "../../../src/providers/providerB/modelsWire"

const models: ReadonlyArray<WorkspaceModel> = ["m1", "m2", "m3", "m4", "m5"].map((id) => ({ id, info: undefined, ownKey: false }))

const page = (query: Parameters<typeof modelPageOf>[1]) => {
  const result = modelPageOf(models, query)
  return Either.isRight(result)
    ? { ids: result.right.data.map((model) => model.id), has_more: result.right.has_more, first_id: result.right.first_id, last_id: result.right.last_id }
    : { refused: result.left.problem }
}

describe("a page of the messages models list", () => {
  it("forwards: the first `limit` (20 by default), then after a cursor; has_more when more follow", () => {
    expect(page({})).toEqual({ ids: ["m1", "m2", "m3", "m4", "m5"], has_more: false, first_id: "m1", last_id: "m5" })
    expect(page({ limit: 2 })).toEqual({ ids: ["m1", "m2"], has_more: true, first_id: "m1", last_id: "m2" })
    expect(page({ limit: 2, after_id: "m2" })).toEqual({ ids: ["m3", "m4"], has_more: true, first_id: "m3", last_id: "m4" })
    expect(page({ limit: 2, after_id: "m4" })).toEqual({ ids: ["m5"], has_more: false, first_id: "m5", last_id: "m5" })
    expect(page({ after_id: "m5" })).toEqual({ ids: [], has_more: false, first_id: null, last_id: null })
  })

  it("backwards: the `limit` models just before the cursor; has_more when more precede", () => {
    expect(page({ limit: 2, before_id: "m5" })).toEqual({ ids: ["m3", "m4"], has_more: true, first_id: "m3", last_id: "m4" })
    expect(page({ limit: 2, before_id: "m3" })).toEqual({ ids: ["m1", "m2"], has_more: false, first_id: "m1", last_id: "m2" })
    expect(page({ before_id: "m1" })).toEqual({ ids: [], has_more: false, first_id: null, last_id: null })
  })

  it("refuses a cursor that is not in the list, and both cursors at once, naming the parameter", () => {
    expect(page({ after_id: "m9" })).toEqual({
      refused: { status: 400, code: "invalid_request_error", message: "after_id: 'm9' is not a model of this list.", param: "after_id" }
    })
    expect(page({ before_id: "m9" })).toMatchObject({ refused: { status: 400, param: "before_id" } })
    expect(page({ after_id: "m1", before_id: "m3" })).toMatchObject({ refused: { status: 400, message: "after_id and before_id cannot both be given." } })
  })
})
