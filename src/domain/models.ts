/**
 * The model catalog: which models each forwarded endpoint accepts, with what a service needs to
 * know about them (context length, output limit, tokenizer). Prices live in the settings, not here.
 * MODEL_CATALOG is the built-in list only: what the gateway serves is the ModelCatalog service's catalog (this list
 * merged with the routes file's `catalog`), which the helpers below take as a parameter.
 *
 * Context lengths and output limits of provider_a and provider_b models are the providers'
 * published figures at the time of writing; codemodel-2501's context length is the spec's.
 */

import type { ProviderId } from "./providerId"

/** Which forwarded endpoint a model serves. */
export type ModelFamily = "chat_completions" | "embeddings" | "messages" | "fim"

/** How to count tokens: a tiktoken encoding, or a character-based estimate. */
export type TokenizerHint = "cl100k_base" | "o200k_base" | "estimate"

export interface ModelInfo {
  readonly id: string
  readonly provider: ProviderId
  readonly family: ModelFamily
  /** Input + output tokens the model accepts in one request. */
  readonly contextLength: number
  /** Most tokens the model generates in one answer; undefined for embeddings. */
  readonly maxOutputTokens: number | undefined
  readonly tokenizer: TokenizerHint
  /**
   * A reasoning model: its provider refuses `max_tokens` and takes `max_completion_tokens`
   * (which also bounds the hidden reasoning tokens).
   */
  readonly reasoning: boolean
}

/** Per provider, the models a workspace that brings its own provider keys may use. */
export type ByokModels = Partial<Record<ProviderId, ReadonlyArray<string>>>

export const DEFAULT_FIM_MODEL = "codemodel-2501"

const chat = (id: string, contextLength: number, maxOutputTokens: number, kind: "reasoning" | "plain" = "plain"): ModelInfo => ({
  id,
  provider: "provider_a",
  family: "chat_completions",
  contextLength,
  maxOutputTokens,
  tokenizer: "o200k_base",
  reasoning: kind === "reasoning"
})

const messages = (id: string, maxOutputTokens: number): ModelInfo => ({
  id,
  provider: "provider_b",
  family: "messages",
  contextLength: 200_000,
  maxOutputTokens,
  tokenizer: "estimate",
  reasoning: false
})

export const MODEL_CATALOG: ReadonlyArray<ModelInfo> = [
  chat("chatgen-5", 400_000, 128_000, "reasoning"),
  chat("chatgen-5-mini", 400_000, 128_000, "reasoning"),
  chat("chatgen-5-nano", 400_000, 128_000, "reasoning"),
  // The chat variant is not a reasoning model: it takes max_tokens.
  chat("chatgen-5-chat", 128_000, 16_384),
  chat("chatgen-4.1", 1_047_576, 32_768),
  chat("chatgen-4.1-mini", 1_047_576, 32_768),
  chat("chatgen-4.1-nano", 1_047_576, 32_768),
  chat("o4-mini", 200_000, 100_000, "reasoning"),
  chat("o3", 200_000, 100_000, "reasoning"),
  chat("o3-mini", 200_000, 100_000, "reasoning"),
  chat("o1", 200_000, 100_000, "reasoning"),
  chat("o1-mini", 128_000, 65_536, "reasoning"),
  chat("o1-preview", 128_000, 32_768, "reasoning"),
  chat("chatgen-4o", 128_000, 16_384),
  chat("chatgen-4o-mini", 128_000, 16_384),
  {
    id: "text-embedding-ada-002",
    provider: "provider_a",
    family: "embeddings",
    // The spec's limit per input.
    contextLength: 8_192,
    maxOutputTokens: undefined,
    tokenizer: "cl100k_base",
    reasoning: false
  },
  messages("assistantmodel-sonnet-4-5-20250929", 64_000),
  messages("assistantmodel-sonnet-4-20250514", 64_000),
  messages("assistantmodel-3-7-sonnet-20250219", 64_000),
  messages("assistantmodel-3-5-sonnet-20240620", 8_192),
  {
    id: DEFAULT_FIM_MODEL,
    provider: "provider_c",
    family: "fim",
    contextLength: 256_000,
    maxOutputTokens: undefined,
    tokenizer: "estimate",
    reasoning: false
  }
]

/**
 * A catalog to look models up in: the one the gateway serves (the ModelCatalog service: the built-in list merged
 * with the routes file's) or, where only the spec's models matter (OpenAPI examples, tests), `builtInCatalog`.
 */
export interface Catalog {
  /** Every entry, in catalog order. */
  readonly models: ReadonlyArray<ModelInfo>
  /** The entry of a model, if the catalog lists it for that provider and endpoint. */
  readonly find: (provider: ProviderId, family: ModelFamily, model: string) => ModelInfo | undefined
  /** The model ids of one provider and endpoint, in catalog order. */
  readonly ids: (provider: ProviderId, family: ModelFamily) => ReadonlyArray<string>
  /**
   * The bound of a model outside the catalog (a workspace's own): the largest context of the catalog, never below
   * the built-in list's (an operator's shorter catalog says nothing of the models workspaces bring).
   */
  readonly largestContext: number
}

const builtInLargestContext = Math.max(...MODEL_CATALOG.map((model) => model.contextLength))

/** A catalog over a list of entries, indexed once (the lookups run on every request). */
export const catalogOf = (models: ReadonlyArray<ModelInfo>): Catalog => {
  const byKey = new Map<string, ModelInfo>()
  const idsOf = new Map<string, Array<string>>()
  for (const info of models) {
    byKey.set(`${info.provider}/${info.family}/${info.id}`, info)
    const group = `${info.provider}/${info.family}`
    idsOf.set(group, [...(idsOf.get(group) ?? []), info.id])
  }
  return {
    models,
    find: (provider, family, model) => byKey.get(`${provider}/${family}/${model}`),
    ids: (provider, family) => idsOf.get(`${provider}/${family}`) ?? [],
    largestContext: Math.max(builtInLargestContext, ...models.map((model) => model.contextLength))
  }
}

/** The built-in list as a catalog: the spec's models, what the OpenAPI examples show. */
export const builtInCatalog: Catalog = catalogOf(MODEL_CATALOG)

/**
 * Whether a workspace may call `model` on this endpoint. A workspace that brings its own keys for a
 * provider uses exactly its own list for that provider (the spec: "the available models may
 * differ"); otherwise the catalog decides.
 */
export const isKnownModel = (
  catalog: Catalog,
  provider: ProviderId,
  family: ModelFamily,
  model: string,
  byokModels?: ByokModels
): boolean => {
  const ownModels = byokModels?.[provider]
  return ownModels !== undefined ? ownModels.includes(model) : catalog.find(provider, family, model) !== undefined
}

/**
 * Endpoints that serve their catalog models only, whatever the workspace brings (embeddings, FIM): their
 * services refuse any other model with ModelNotSupported and never read the workspace's own list.
 */
export const catalogOnlyFamilies: ReadonlySet<ModelFamily> = new Set<ModelFamily>(["embeddings", "fim"])

/** Whether one of the provider's endpoints (`family`) accepts `model` for a workspace: the rule its service applies. */
export const acceptsModel = (catalog: Catalog, provider: ProviderId, family: ModelFamily, model: string, byokModels?: ByokModels): boolean =>
  catalogOnlyFamilies.has(family)
    ? catalog.find(provider, family, model) !== undefined
    : isKnownModel(catalog, provider, family, model, byokModels)

/** A model a workspace may use, with its catalog entry (none for a model of its own list that the catalog does not know). */
export interface WorkspaceModel {
  readonly id: string
  readonly info: ModelInfo | undefined
  /** Called with the workspace's own key (a model of its own list): only a route's native deployments serve it. */
  readonly ownKey: boolean
}

/**
 * The models a workspace may call at a provider, what its models list shows before the route is asked which it
 * serves: per endpoint of the provider, the same rule as `acceptsModel` (the workspace's own list for the
 * provider when it has one, else the catalog; the catalog-only endpoints' models always), each model once,
 * catalog order first.
 */
export const workspaceModels = (catalog: Catalog, provider: ProviderId, byokModels?: ByokModels): ReadonlyArray<WorkspaceModel> => {
  const families = [...new Set(catalog.models.filter((info) => info.provider === provider).map((info) => info.family))]
  const own = byokModels?.[provider]
  const listed = families.flatMap((family) =>
    catalogOnlyFamilies.has(family) || own === undefined
      ? catalog.ids(provider, family).map((id) => ({ id, ownKey: false }))
      : own.map((id) => ({ id, ownKey: true }))
  )
  const byId = new Map<string, WorkspaceModel>()
  for (const { id, ownKey } of listed) {
    if (!byId.has(id)) byId.set(id, { id, info: catalog.models.find((info) => info.provider === provider && info.id === id), ownKey })
  }
  return [...byId.values()]
}

/** One model of `workspaceModels` by id, if the workspace may use it. */
export const workspaceModel = (catalog: Catalog, provider: ProviderId, id: string, byokModels?: ByokModels): WorkspaceModel | undefined =>
  workspaceModels(catalog, provider, byokModels).find((model) => model.id === id)

/** Whether a provider_a chat model is a reasoning model (takes max_completion_tokens, refuses max_tokens). */
export const isReasoningModel = (catalog: Catalog, model: string): boolean =>
  catalog.find("provider_a", "chat_completions", model)?.reasoning === true

/** Tokenizer to count a model's tokens with; models outside the catalog (own keys) are estimated. */
export const tokenizerFor = (catalog: Catalog, provider: ProviderId, family: ModelFamily, model: string): TokenizerHint =>
  catalog.find(provider, family, model)?.tokenizer ?? "estimate"

/** A request asking for more output than its model can write: which field, what it asked, the model's limit. */
export interface OutputLimitExceeded {
  readonly field: string
  readonly requested: number
  readonly limit: number
}

/**
 * The first of `fields` (output-token fields of a request) above the output limit of `model` (its catalog entry),
 * if any. Checked before the rate limits: reserving output the model can never write would give a 429 where the
 * provider answers 400. Models outside the catalog (own keys, no entry) are left to their provider.
 */
export const exceededOutputLimit = (
  model: ModelInfo | undefined,
  fields: Readonly<Record<string, number | undefined>>
): OutputLimitExceeded | undefined => {
  const limit = model?.maxOutputTokens
  if (limit === undefined) return undefined
  const over = Object.entries(fields).find(([, requested]) => requested !== undefined && requested > limit)
  return over === undefined ? undefined : { field: over[0], requested: over[1]!, limit }
}
