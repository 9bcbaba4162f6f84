import { describe, expect, it } from "@effect/vitest"
import {
  acceptsModel,
  type ByokModels,
  builtInCatalog as builtIn,
  catalogOf,
  DEFAULT_FIM_MODEL,
  exceededOutputLimit,
  isKnownModel,
  isReasoningModel,
  MODEL_CATALOG,
  tokenizerFor,
  workspaceModel,
  workspaceModels
} from "../../src/domain/models"
import type { ModelFamily } from "../../src/domain/models"
import type { ProviderId } from "../../src/domain/providerId"

const SPEC_CHAT_MODELS = [
  "chatgen-5",
  "chatgen-5-mini",
  "chatgen-5-nano",
  "chatgen-5-chat",
  "chatgen-4.1",
  "chatgen-4.1-mini",
  "chatgen-4.1-nano",
  "o4-mini",
  "o3",
  "o3-mini",
  "o1",
  "o1-mini",
  "o1-preview",
  "chatgen-4o",
  "chatgen-4o-mini"
]

const SPEC_MESSAGES_MODELS = [
  "assistantmodel-sonnet-4-5-20250929",
  "assistantmodel-sonnet-4-20250514",
  "assistantmodel-3-7-sonnet-20250219",
  "assistantmodel-3-5-sonnet-20240620"
]

describe("model catalog", () => {
  it("lists exactly the spec's models per endpoint", () => {
    expect(builtIn.ids("provider_a", "chat_completions")).toEqual(SPEC_CHAT_MODELS)
    expect(builtIn.ids("provider_a", "embeddings")).toEqual(["text-embedding-ada-002"])
    expect(builtIn.ids("provider_b", "messages")).toEqual(SPEC_MESSAGES_MODELS)
    expect(builtIn.ids("provider_c", "fim")).toEqual([DEFAULT_FIM_MODEL])
    expect(MODEL_CATALOG).toHaveLength(SPEC_CHAT_MODELS.length + 1 + SPEC_MESSAGES_MODELS.length + 1)
  })

  it("has unique ids and sane limits", () => {
    expect(new Set(MODEL_CATALOG.map((model) => model.id)).size).toBe(MODEL_CATALOG.length)
    for (const model of MODEL_CATALOG) {
      expect(Number.isInteger(model.contextLength) && model.contextLength > 0).toBe(true)
      if (model.maxOutputTokens !== undefined) {
        expect(model.maxOutputTokens).toBeLessThanOrEqual(model.contextLength)
      }
    }
  })

  it("gives codemodel-2501 the spec's context length", () => {
    expect(DEFAULT_FIM_MODEL).toBe("codemodel-2501")
    expect(builtIn.find("provider_c", "fim", "codemodel-2501")?.contextLength).toBe(256_000)
  })

  it("hints a tiktoken encoding for provider_a and an estimate otherwise", () => {
    expect(tokenizerFor(builtIn, "provider_a", "chat_completions", "chatgen-4o")).toBe("o200k_base")
    expect(tokenizerFor(builtIn, "provider_a", "chat_completions", "o1-mini")).toBe("o200k_base")
    expect(tokenizerFor(builtIn, "provider_a", "embeddings", "text-embedding-ada-002")).toBe("cl100k_base")
    expect(tokenizerFor(builtIn, "provider_b", "messages", "assistantmodel-sonnet-4-20250514")).toBe("estimate")
    expect(tokenizerFor(builtIn, "provider_c", "fim", "codemodel-2501")).toBe("estimate")
    expect(tokenizerFor(builtIn, "provider_a", "chat_completions", "own-model")).toBe("estimate")
  })
})

describe("isKnownModel", () => {
  it.each(SPEC_CHAT_MODELS)("knows chat model %s", (model) => {
    expect(isKnownModel(builtIn, "provider_a", "chat_completions", model)).toBe(true)
  })

  it("ties a model to its provider and endpoint", () => {
    expect(isKnownModel(builtIn, "provider_a", "embeddings", "text-embedding-ada-002")).toBe(true)
    expect(isKnownModel(builtIn, "provider_a", "chat_completions", "text-embedding-ada-002")).toBe(false)
    expect(isKnownModel(builtIn, "provider_a", "embeddings", "chatgen-4o")).toBe(false)
    expect(isKnownModel(builtIn, "provider_b", "messages", "chatgen-4o")).toBe(false)
    expect(isKnownModel(builtIn, "provider_c", "fim", "codemodel-2405")).toBe(false)
    expect(isKnownModel(builtIn, "provider_a", "chat_completions", "CHATGEN-4O")).toBe(false)
  })

  it("uses a workspace's own model list for that provider only", () => {
    const byok = { provider_b: ["assistantmodel-own-1"] }
    expect(isKnownModel(builtIn, "provider_b", "messages", "assistantmodel-own-1", byok)).toBe(true)
    expect(isKnownModel(builtIn, "provider_b", "messages", "assistantmodel-sonnet-4-20250514", byok)).toBe(false)
    expect(isKnownModel(builtIn, "provider_a", "chat_completions", "chatgen-4o", byok)).toBe(true)
    expect(isKnownModel(builtIn, "provider_a", "chat_completions", "chatgen-4o", {})).toBe(true)
  })
})

describe("exceededOutputLimit", () => {
  it("names the first output field above the model's limit, and leaves models outside the catalog alone", () => {
    expect(exceededOutputLimit(builtIn.find("provider_a", "chat_completions", "chatgen-4o"), { max_tokens: 16_384 })).toBeUndefined()
    expect(exceededOutputLimit(builtIn.find("provider_a", "chat_completions", "chatgen-4o"), { max_tokens: undefined })).toBeUndefined()
    expect(exceededOutputLimit(builtIn.find("provider_a", "chat_completions", "chatgen-4o"), { max_completion_tokens: 10, max_tokens: 16_385 }))
      .toEqual({ field: "max_tokens", requested: 16_385, limit: 16_384 })
    expect(exceededOutputLimit(builtIn.find("provider_b", "messages", "assistantmodel-3-5-sonnet-20240620"), { max_tokens: 9_000 }))
      .toEqual({ field: "max_tokens", requested: 9_000, limit: 8_192 })
    expect(exceededOutputLimit(builtIn.find("provider_a", "chat_completions", "own-model"), { max_tokens: 10_000_000 })).toBeUndefined()
  })
})

describe("isReasoningModel", () => {
  it("marks the models whose provider takes max_completion_tokens instead of max_tokens", () => {
    const reasoning = ["o1", "o1-mini", "o1-preview", "o3", "o3-mini", "o4-mini", "chatgen-5", "chatgen-5-mini", "chatgen-5-nano"]
    expect(SPEC_CHAT_MODELS.filter((id) => isReasoningModel(builtIn, id))).toEqual(expect.arrayContaining(reasoning))
    expect(SPEC_CHAT_MODELS.filter((id) => isReasoningModel(builtIn, id))).toHaveLength(reasoning.length)
    expect(isReasoningModel(builtIn, "chatgen-5-chat")).toBe(false)
    expect(isReasoningModel(builtIn, "own-model")).toBe(false)
  })
})

describe("the models a workspace may use (its models lists)", () => {
  const ids = (provider: ProviderId, byok?: ByokModels) => workspaceModels(builtIn, provider, byok).map((model) => model.id)

  it("without lists of its own: the catalog of each provider, every endpoint's models, in catalog order", () => {
    expect(ids("provider_a")).toEqual([...SPEC_CHAT_MODELS, "text-embedding-ada-002"])
    expect(ids("provider_b")).toEqual(SPEC_MESSAGES_MODELS)
    expect(ids("provider_c")).toEqual([DEFAULT_FIM_MODEL])
    expect(workspaceModel(builtIn, "provider_b", SPEC_MESSAGES_MODELS[0]!)?.info).toEqual(builtIn.find("provider_b", "messages", SPEC_MESSAGES_MODELS[0]!))
  })

  it("with its own list for a provider: that list, plus the models of endpoints that serve their catalog model only", () => {
    const byok: ByokModels = { provider_a: ["chatgen-4o", "own-model", "chatgen-4o"], provider_b: [], provider_c: ["codemodel-x"] }
    expect(ids("provider_a", byok)).toEqual(["chatgen-4o", "own-model", "text-embedding-ada-002"])
    expect(ids("provider_b", byok)).toEqual([])
    expect(ids("provider_c", byok)).toEqual([DEFAULT_FIM_MODEL])
    expect(workspaceModel(builtIn, "provider_a", "own-model", byok)).toEqual({ id: "own-model", info: undefined, ownKey: true })
    expect(workspaceModel(builtIn, "provider_a", "chatgen-4o-mini", byok)).toBeUndefined()
  })

  it("lists exactly the models some endpoint of the provider accepts, with and without lists of its own", () => {
    const families: Record<ProviderId, ReadonlyArray<ModelFamily>> = {
      provider_a: ["chat_completions", "embeddings"],
      provider_b: ["messages"],
      provider_c: ["fim"]
    }
    const settings: ReadonlyArray<ByokModels | undefined> = [
      undefined,
      {},
      { provider_a: ["chatgen-4o", "own-a"] },
      { provider_b: ["assistantmodel-own", SPEC_MESSAGES_MODELS[1]!], provider_c: ["own-c"] },
      { provider_a: [], provider_b: [], provider_c: [] }
    ]
    const candidates = [...MODEL_CATALOG.map((info) => info.id), "own-a", "own-c", "assistantmodel-own", "nothing"]
    for (const byok of settings) {
      for (const provider of ["provider_a", "provider_b", "provider_c"] as const) {
        const listed = new Set(ids(provider, byok))
        for (const model of candidates) {
          const accepted = families[provider].some((family) => acceptsModel(builtIn, provider, family, model, byok))
          expect({ provider, model, byok, listed: listed.has(model) }).toEqual({ provider, model, byok, listed: accepted })
        }
      }
    }
  })

  it("acceptsModel is isKnownModel where the workspace's list counts, the catalog where it does not", () => {
    const byok: ByokModels = { provider_a: ["own-a"], provider_c: ["own-c"] }
    expect(acceptsModel(builtIn, "provider_a", "chat_completions", "own-a", byok)).toBe(isKnownModel(builtIn, "provider_a", "chat_completions", "own-a", byok))
    expect(acceptsModel(builtIn, "provider_a", "chat_completions", "chatgen-4o", byok)).toBe(false)
    expect(acceptsModel(builtIn, "provider_a", "embeddings", "text-embedding-ada-002", byok)).toBe(true)
    expect(acceptsModel(builtIn, "provider_a", "embeddings", "own-a", byok)).toBe(false)
    expect(acceptsModel(builtIn, "provider_c", "fim", "own-c", byok)).toBe(false)
    expect(acceptsModel(builtIn, "provider_c", "fim", DEFAULT_FIM_MODEL, byok)).toBe(true)
  })
})

describe("a catalog over other entries (the routes file's merged in)", () => {
  const own = { ...builtIn.find("provider_a", "chat_completions", "chatgen-4o-mini")!, id: "chatgen-4o-mini-2024-07-18", maxOutputTokens: 1_000 }
  const catalog = catalogOf([own])

  it("finds its own entries only, by provider, endpoint and id", () => {
    expect(catalog.find("provider_a", "chat_completions", own.id)).toEqual(own)
    expect(catalog.find("provider_a", "embeddings", own.id)).toBeUndefined()
    expect(catalog.find("provider_a", "chat_completions", "chatgen-4o")).toBeUndefined()
    expect(catalog.ids("provider_a", "chat_completions")).toEqual([own.id])
    expect(catalog.ids("provider_b", "messages")).toEqual([])
    expect(workspaceModels(catalog, "provider_b")).toEqual([])
  })

  it("reads limits from the entry given, and never bounds a model outside it below the built-in list's largest context", () => {
    expect(exceededOutputLimit(catalog.find("provider_a", "chat_completions", own.id), { max_tokens: 1_001 }))
      .toEqual({ field: "max_tokens", requested: 1_001, limit: 1_000 })
    expect(catalog.largestContext).toBe(builtIn.largestContext)
    expect(builtIn.largestContext).toBe(Math.max(...MODEL_CATALOG.map((info) => info.contextLength)))
  })
})
