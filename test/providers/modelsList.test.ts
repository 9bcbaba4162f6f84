import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { listedModel, modelCreatedAt, modelsListPath } from "../../src/providers/modelsList"
import { providerA } from "../../src/providers/providerA/dialect"
import { providerB } from "../../src/providers/providerB/dialect"

describe("the models lists' rules", () => {
  it("names the list under BASE_PATH, in the request's region", () => {
    expect(modelsListPath("", providerA, "eu")).toBe("/provider_a/eu/v1/models")
    expect(modelsListPath("/api/public", providerB, "us")).toBe("/api/public/provider_b/us/v1/models")
  })

  it("dates a model by the date its id ends with, else by the catalog's date", () => {
    expect(modelCreatedAt("assistantmodel-sonnet-4-20250514").toISOString()).toBe("2025-05-14T00:00:00.000Z")
    expect(modelCreatedAt("chatgen-4o").toISOString()).toBe("2025-01-01T00:00:00.000Z")
    expect(modelCreatedAt("chatgen-20251399").toISOString()).toBe("2025-01-01T00:00:00.000Z")
    expect(modelCreatedAt("chatgen-20250231").toISOString()).toBe("2025-01-01T00:00:00.000Z")
  })

  it("finds a model of the list, else refuses it naming the list", () => {
    const models = [{ id: "own-model", info: undefined, ownKey: true }]
    expect(listedModel(models, "own-model", "/base/provider_b/us/v1/models")).toEqual(Either.right(models[0]))
    expect(listedModel(models, "assistantmodel-sonnet-4-20250514", "/base/provider_b/us/v1/models")).toEqual(
      Either.left(expect.objectContaining({ _tag: "ModelNotFound", model: "assistantmodel-sonnet-4-20250514", modelsPath: "/base/provider_b/us/v1/models" }))
    )
  })
})
