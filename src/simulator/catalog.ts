// The models each simulated provider knows, with the limits it enforces.

export interface ChatModel {
  readonly contextWindow: number
  readonly maxOutputTokens: number
}

const chat = (contextWindow: number, maxOutputTokens: number): ChatModel => ({ contextWindow, maxOutputTokens })

/** provider_a chat completions. */
export const chatCompletionModels: ReadonlyMap<string, ChatModel> = new Map([
  ["chatgen-5", chat(400_000, 128_000)],
  ["chatgen-5-mini", chat(400_000, 128_000)],
  ["chatgen-5-nano", chat(400_000, 128_000)],
  ["chatgen-5-chat", chat(128_000, 16_384)],
  ["chatgen-4.1", chat(1_047_576, 32_768)],
  ["chatgen-4.1-mini", chat(1_047_576, 32_768)],
  ["chatgen-4.1-nano", chat(1_047_576, 32_768)],
  ["o4-mini", chat(200_000, 100_000)],
  ["o3", chat(200_000, 100_000)],
  ["o3-mini", chat(200_000, 100_000)],
  ["o1", chat(200_000, 100_000)],
  ["o1-mini", chat(128_000, 65_536)],
  ["o1-preview", chat(128_000, 32_768)],
  ["chatgen-4o", chat(128_000, 16_384)],
  ["chatgen-4o-mini", chat(128_000, 16_384)]
])

export interface EmbeddingModel {
  readonly dimensions: number
  /** Whether the request may ask for shorter vectors. */
  readonly acceptsDimensions: boolean
  readonly maxInputTokens: number
}

/** provider_a embeddings. */
export const embeddingModels: ReadonlyMap<string, EmbeddingModel> = new Map([
  ["text-embedding-ada-002", { dimensions: 1536, acceptsDimensions: false, maxInputTokens: 8192 }],
  ["text-embedding-3-small", { dimensions: 1536, acceptsDimensions: true, maxInputTokens: 8192 }],
  ["text-embedding-3-large", { dimensions: 3072, acceptsDimensions: true, maxInputTokens: 8192 }]
])

/** provider_b messages. */
export const messagesModels: ReadonlyMap<string, ChatModel> = new Map([
  ["assistantmodel-sonnet-4-5-20250929", chat(200_000, 64_000)],
  ["assistantmodel-sonnet-4-20250514", chat(200_000, 64_000)],
  ["assistantmodel-3-7-sonnet-20250219", chat(200_000, 64_000)],
  ["assistantmodel-3-5-sonnet-20240620", chat(200_000, 8_192)]
])

/** provider_c FIM completions. */
export const fimModels: ReadonlyMap<string, ChatModel> = new Map([
  ["codemodel-2501", chat(256_000, 256_000)],
  ["codemodel-latest", chat(256_000, 256_000)]
])
