import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { defaultWorkspaceSettings } from "../../src/domain/workspaceSettings"
import { listedModel, listedModels, modelCreatedAt, modelsListPath } from "../../src/providers/modelsList"
import { providerA } from "../../src/providers/providerA/dialect"
import { providerB } from "../../src/providers/providerB/dialect"
import { providerC } from "../../src/providers/providerC/dialect"

const principalWith = (byokModels: Record<string, ReadonlyArray<string>>) => ({
  keyId: "00000000-0000-4000-8000-000000000001",
  scopes: ["COMPLETION_API" as const],
  workspace: {
    id: "00000000-0000-4000-8000-000000000002",
    name: "w",
    settings: { ...defaultWorkspaceSettings, byokModels },
    createdAt: new Date(0)
  }
})

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

  it("refuses a region the provider does not serve, and a model the workspace may not use (naming the list)", () => {
    const principal = principalWith({ provider_b: ["own-model"] })
    expect(listedModels(providerC, "us", principal)).toEqual(Either.left(expect.objectContaining({ _tag: "RegionNotServed", region: "us" })))
    expect(Either.map(listedModels(providerB, "eu", principal), (models) => models.map((model) => model.id))).toEqual(Either.right(["own-model"]))
    const refused = listedModel(providerB, "us", principal, "assistantmodel-sonnet-4-20250514", "/base")
    expect(refused).toEqual(
      Either.left(expect.objectContaining({ _tag: "ModelNotFound", model: "assistantmodel-sonnet-4-20250514", modelsPath: "/base/provider_b/us/v1/models" }))
    )
    expect(listedModel(providerB, "us", principal, "own-model", "")).toEqual(Either.right({ id: "own-model", info: undefined }))
  })
})
