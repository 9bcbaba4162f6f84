import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema, SchemaAST as AST } from "effect"
import { onePassDecoding } from "../../src/domain/onePassDecoding"
import { fromParseError } from "../../src/domain/validationIssue"
import { ChatCompletionRequest } from "../../src/providers/providerA/chatCompletionsWire"
import { EmbeddingRequest } from "../../src/providers/providerA/embeddingsWire"
import { CountTokensRequest, MessagesRequest } from "../../src/providers/providerB/messagesWire"
import { FimCompletionRequest } from "../../src/providers/providerC/fimWire"

// The one-pass form must be indistinguishable from the declared schema to whoever reads a decode: compared here
// over full requests and every mutation of them at every position (a member replaced by a value of each JSON kind,
// by null, or removed): the same decoded value (keys in the same order), or the same issues and messages.

const chatRequest = {
  model: "chatgen-4o",
  messages: [
    { role: "system", content: [{ type: "text", text: "Be brief." }], name: "setup" },
    {
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
        { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
        { type: "file", file: { file_id: "file-1", filename: "a.pdf", file_data: null } }
      ],
      name: null
    },
    {
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{}" } }],
      function_call: { name: "weather", arguments: "{}" },
      audio: { id: "audio_1" }
    },
    { role: "tool", tool_call_id: "call_1", content: "18 C" },
    { role: "function", name: "weather", content: null }
  ],
  max_tokens: 10,
  max_completion_tokens: null,
  temperature: 0.5,
  top_p: null,
  frequency_penalty: 0,
  presence_penalty: null,
  logit_bias: { "42": 1 },
  logprobs: true,
  top_logprobs: 2,
  stop: ["a", "b"],
  stream: null,
  response_format: { type: "json_schema", json_schema: { name: "answer", description: null, schema: { type: "object" }, strict: true } },
  seed: 1,
  user: null,
  tools: [{ type: "function", function: { name: "weather", description: "The weather", parameters: { type: "object" }, strict: null } }],
  tool_choice: { type: "function", function: { name: "weather" } },
  functions: [{ name: "weather", description: null, parameters: { type: "object" } }],
  function_call: "auto",
  reasoning_effort: "low",
  verbosity: null,
  n: 1,
  stream_options: { include_usage: true },
  not_a_parameter: 1
}

const messagesRequest = {
  model: "assistantmodel-sonnet-4-5-20250929",
  max_tokens: 100,
  system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral", ttl: null } }],
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Look", cache_control: null },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" }, cache_control: { type: "ephemeral" } },
        { type: "document", source: { type: "text", data: "x" } }
      ]
    },
    { role: "assistant", content: [{ type: "tool_use", id: "tu_1", name: "weather", input: { city: "Paris" } }] },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "tu_1", content: [{ type: "text", text: "18 C" }], is_error: null }]
    }
  ],
  stop_sequences: null,
  stream: true,
  temperature: null,
  top_k: 5,
  top_p: 0.5,
  tools: [
    { name: "weather", description: null, input_schema: { type: "object" }, type: "custom", cache_control: null },
    { type: "web_search_20250305", name: "web_search", max_uses: 3 }
  ],
  tool_choice: { type: "tool", name: "weather", disable_parallel_tool_use: null },
  metadata: { user_id: null, other: 1 },
  thinking: { type: "enabled", budget_tokens: 1024 }
}

const embeddingRequest = { input: ["one", "two"], model: "text-embedding-ada-002", encoding_format: null, dimensions: 8, user: null }

const fimRequest = {
  model: null,
  prompt: "def add(a, b):",
  suffix: null,
  temperature: 0.2,
  top_p: null,
  max_tokens: 64,
  min_tokens: null,
  random_seed: 1,
  stop: "\n\n",
  stream: null,
  metadata: { a: 1 },
  prompt_cache_key: null
}

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

const replacements: ReadonlyArray<Json> = [null, "x", "", 7, -1, 1.5, true, {}, [], [1], { type: "text" }]

/** The body with the value at `path` replaced (or removed when `value` is undefined). */
const mutated = (body: Json, path: ReadonlyArray<string | number>, value: Json | undefined): Json => {
  if (path.length === 0) return value ?? null
  const [head, ...rest] = path
  if (Array.isArray(body)) {
    const copy = [...body]
    if (rest.length === 0 && value === undefined) copy.splice(head as number, 1)
    else copy[head as number] = mutated(copy[head as number] ?? null, rest, value)
    return copy
  }
  const record = body as { readonly [key: string]: Json }
  const copy: { [key: string]: Json } = { ...record }
  if (rest.length === 0 && value === undefined) delete copy[head as string]
  else copy[head as string] = mutated(record[head as string] ?? null, rest, value)
  return copy
}

/** Every position of a JSON value, with the value there. */
const positionsOf = (
  body: Json,
  prefix: ReadonlyArray<string | number> = []
): Array<readonly [ReadonlyArray<string | number>, Json]> => {
  const children: Array<readonly [string | number, Json]> = Array.isArray(body)
    ? body.map((item, index) => [index, item] as const)
    : body !== null && typeof body === "object"
    ? Object.entries(body as { readonly [key: string]: Json })
    : []
  return [[prefix, body], ...children.flatMap(([key, child]) => positionsOf(child, [...prefix, key]))]
}

const isObject = (value: Json): boolean => value !== null && typeof value === "object" && !Array.isArray(value)

/** Every mutation of a body: each position replaced by each kind of value, removed, or given an unknown member. */
const mutationsOf = (body: Json): Array<Json> =>
  positionsOf(body).flatMap(([path, value]) => [
    ...replacements.map((replacement) => mutated(body, path, replacement)),
    ...(path.length > 0 ? [mutated(body, path, undefined)] : []),
    ...(isObject(value) ? [mutated(body, [...path, "extra"], null)] : [])
  ])

/** A decode's outcome as text that shows key order, undefined members, issues and messages. */
const outcome = <A, I>(schema: Schema.Schema<A, I>, body: unknown): string => {
  try {
    const result = Schema.decodeUnknownEither(schema)(body)
    if (Either.isRight(result)) return `ok ${JSON.stringify(result.right, (_, v) => (v === undefined ? "<undefined>" : v))}`
    return `error ${JSON.stringify(ParseResult.ArrayFormatter.formatErrorSync(result.left))} ${
      JSON.stringify(fromParseError(result.left))
    } ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`
  } catch (defect) {
    return `threw ${String(defect)}`
  }
}

/** Whether a property transformation of a struct is left anywhere in the schema. */
const hasStructTransformation = (ast: AST.AST, seen = new Set<AST.AST>()): boolean => {
  if (seen.has(ast)) return false
  seen.add(ast)
  switch (ast._tag) {
    case "Transformation":
      return AST.isTypeLiteralTransformation(ast.transformation) || hasStructTransformation(ast.from, seen)
    case "Refinement":
      return hasStructTransformation(ast.from, seen)
    case "Union":
      return ast.types.some((type) => hasStructTransformation(type, seen))
    case "TupleType":
      return [...ast.elements, ...ast.rest].some((e) => hasStructTransformation(e.type, seen))
    case "TypeLiteral":
      return [...ast.propertySignatures, ...ast.indexSignatures].some((ps) => hasStructTransformation(ps.type, seen))
    default:
      return false
  }
}

const cases = [
  { name: "ChatCompletionRequest", schema: ChatCompletionRequest as Schema.Schema<unknown, unknown>, body: chatRequest },
  { name: "MessagesRequest", schema: MessagesRequest as Schema.Schema<unknown, unknown>, body: messagesRequest },
  { name: "CountTokensRequest", schema: CountTokensRequest as Schema.Schema<unknown, unknown>, body: messagesRequest },
  { name: "EmbeddingRequest", schema: EmbeddingRequest as Schema.Schema<unknown, unknown>, body: embeddingRequest },
  { name: "FimCompletionRequest", schema: FimCompletionRequest as Schema.Schema<unknown, unknown>, body: fimRequest }
]

describe("onePassDecoding", () => {
  for (const { name, schema, body } of cases) {
    it(`${name}: no property transformation is left to decode`, () => {
      expect(hasStructTransformation(schema.ast)).toBe(true)
      expect(hasStructTransformation(onePassDecoding(schema).ast)).toBe(false)
    })

    it(`${name}: the same outcome as the declared schema for the request and each of its mutations`, () => {
      const onePass = onePassDecoding(schema)
      const bodies = [body, ...mutationsOf(body as Json)]
      const differing = bodies.flatMap((candidate) => {
        const [declared, fused] = [outcome(schema, candidate), outcome(onePass, candidate)]
        return declared === fused ? [] : [{ candidate, declared, fused }]
      })
      expect(bodies.length).toBeGreaterThan(50)
      expect(differing.slice(0, 3)).toEqual([])
    })
  }

  it("null optional parameters are absent after the decode, and defaults are given", () => {
    const chat = Schema.decodeUnknownSync(onePassDecoding(ChatCompletionRequest))({
      model: "chatgen-4o",
      messages: [{ role: "user", content: "Hi", name: null }],
      temperature: null,
      top_p: 0.5
    })
    expect(chat).toEqual({ model: "chatgen-4o", messages: [{ role: "user", content: "Hi" }], top_p: 0.5 })
    expect(Object.keys(chat)).toEqual(["model", "messages", "top_p"])
    const fim = Schema.decodeUnknownSync(onePassDecoding(FimCompletionRequest))({ prompt: "x", suffix: null })
    expect(Object.keys(fim)).toEqual(["model", "prompt", "suffix", "stream"])
    expect(fim).toMatchObject({ suffix: "", stream: false })
  })

  it("a schema without property transformations keeps its node (and so its parser)", () => {
    const plain = Schema.Struct({ a: Schema.optionalWith(Schema.String, { exact: true }) })
    expect(onePassDecoding(plain).ast).toBe(plain.ast)
  })
})
