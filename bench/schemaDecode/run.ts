// `npm run bench:schema-decode`: what decoding a request body costs, per request kind, with the endpoints' own
// schemas, with the parser the forwarding lane's payloadDecoder runs (default options, without the effect around it): bytes allocated and µs a
// decode, for the schema as declared and for its one-pass form (src/domain/onePassDecoding.ts), against
// JSON.parse of the same body in the same run. In one process, no service, no network: a figure moves only with
// the code (bytes) or the core's speed (µs). BENCH_WRITE=1 writes the table into bench/RESULTS.md ("Schema decode").
//
// Bytes: the young generation is made larger than a batch (run with --max-semi-space-size, as the npm script does),
// so no collection runs inside a batch and the heap's growth over the batch is what it allocated; the median of
// several batches (a batch a collection cut short would read low, and is outvoted).
import { Effect, Either, Schema } from "effect"
import * as os from "node:os"
import * as v8 from "node:v8"
import { HttpApiError } from "@effect/platform"
import { decodeProblem, payloadDecoder } from "../../src/api/requestProblems"
import { InvalidRequest } from "../../src/domain/refusals"
import { onePassDecoding } from "../../src/domain/onePassDecoding"
import { ChatCompletionRequest } from "../../src/providers/providerA/chatCompletionsWire"
import { EmbeddingRequest } from "../../src/providers/providerA/embeddingsWire"
import { MessagesRequest } from "../../src/providers/providerB/messagesWire"
import { FimCompletionRequest } from "../../src/providers/providerC/fimWire"
import { chatBody, twentyTokens } from "../gateway/targets"
import { writeSection } from "../results"

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc (npm run bench:schema-decode does)")

interface Kind {
  readonly name: string
  readonly schema: Schema.Schema<unknown, unknown>
  readonly body: string
}

const richChat = JSON.stringify({
  model: "chatgen-4o",
  messages: [
    { role: "system", content: "You answer in one sentence." },
    { role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{\"city\":\"Paris\"}" } }]
    },
    { role: "tool", tool_call_id: "call_1", content: "18 °C, clear" }
  ],
  tools: [{
    type: "function",
    function: {
      name: "weather",
      description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    }
  }],
  temperature: 0.2,
  max_completion_tokens: 200,
  stream: true,
  stream_options: { include_usage: true }
})

// The gateway benchmark's bodies (bench/gateway/targets.ts) and two fuller ones, as client libraries send them.
const kinds: ReadonlyArray<Kind> = [
  { name: "chat completion (gateway benchmark body)", schema: ChatCompletionRequest, body: chatBody({ stream: false }) },
  { name: "chat completion, 4 messages and a tool", schema: ChatCompletionRequest, body: richChat },
  {
    name: "messages (gateway benchmark body)",
    schema: MessagesRequest,
    body: JSON.stringify({ model: "assistantmodel-sonnet-4-5-20250929", max_tokens: 100, stream: true, messages: [{ role: "user", content: twentyTokens }] })
  },
  {
    name: "embeddings (gateway benchmark body)",
    schema: EmbeddingRequest,
    body: JSON.stringify({ model: "text-embedding-ada-002", input: "The quick brown fox jumps over the lazy dog." })
  },
  {
    name: "FIM completion",
    schema: FimCompletionRequest,
    body: JSON.stringify({ model: "codemodel-latest", prompt: "def add(a, b):", suffix: "    return c", max_tokens: 64, stream: false })
  }
] as ReadonlyArray<Kind>

const heapUsed = () => v8.getHeapStatistics().used_heap_size

/** Bytes a call of `run` allocates (median of 9 batches) and µs a call (median of 5 rounds). */
const measure = (run: () => unknown, batch: number): { bytes: number; us: number } => {
  for (let i = 0; i < 2_000; i++) run()
  const bytes = Array.from({ length: 9 }, () => {
    gc()
    const before = heapUsed()
    for (let i = 0; i < batch; i++) run()
    return (heapUsed() - before) / batch
  }).sort((a, b) => a - b)[4]!
  const us = Array.from({ length: 5 }, () => {
    const started = performance.now()
    for (let i = 0; i < 20_000; i++) run()
    return ((performance.now() - started) * 1000) / 20_000
  }).sort((a, b) => a - b)[2]!
  return { bytes, us }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`
const rows: Array<string> = []
for (const kind of kinds) {
  const parsed: unknown = JSON.parse(kind.body)
  const onePass = onePassDecoding(kind.schema)
  // The parser the lane's payloadDecoder runs (default options), without the effect around it.
  const decodeWith = (schema: Schema.Schema<unknown, unknown>) => {
    const decode = Schema.decodeUnknownEither(schema)
    return () => Either.getOrThrow(decode(parsed))
  }
  const declared = decodeWith(kind.schema)
  const fused = decodeWith(onePass)
  const [a, b] = [kind.schema, onePass].map((schema) => JSON.stringify(Effect.runSync(payloadDecoder(schema)(parsed))))
  if (a !== b || a !== JSON.stringify(fused())) throw new Error(`${kind.name}: the two decodes differ`)
  const parse = measure(() => JSON.parse(kind.body), 1_000)
  const before = measure(declared, 1_000)
  const after = measure(fused, 1_000)
  rows.push(
    `| ${kind.name} (${kind.body.length} B) | ${kb(parse.bytes)} · ${parse.us.toFixed(2)} µs | ${kb(before.bytes)} · ${
      before.us.toFixed(2)
    } µs | ${kb(after.bytes)} · ${after.us.toFixed(2)} µs | ${(after.bytes / before.bytes).toFixed(2)} · ${(after.us / before.us).toFixed(2)} |`
  )
}

// The decode as a step of the request's fiber, for the chat body: the lane's step before this issue (the decode
// suspended, with two error handlers around it) against payloadDecoder's, both with the one-pass schema; a fiber
// that only suspends is the baseline (run here by runSync; in the service the request's fiber already exists).
const chat = onePassDecoding(ChatCompletionRequest as Schema.Schema<unknown, unknown>)
const chatParsed: unknown = JSON.parse(kinds[0]!.body)
const unreadable = new InvalidRequest({ problem: { status: 400, code: "invalid_request", message: "unreadable" } })
const stepBefore = (body: unknown) =>
  Effect.suspend(() => Schema.decodeUnknown(chat)(body)).pipe(
    Effect.catchTag("ParseError", (error) =>
      Effect.flatMap(
        HttpApiError.HttpApiDecodeError.fromParseError(error),
        (decodeError) => Effect.fail(new InvalidRequest({ problem: decodeProblem(decodeError) }))
      )),
    Effect.catchAllDefect(() => Effect.fail(unreadable))
  )
const stepNow = payloadDecoder(chat)
const fiberOnly = measure(() => Effect.runSync(Effect.suspend(() => Effect.succeed(chatParsed))), 1_000)
const [beforeStep, nowStep] = [stepBefore, stepNow].map((step) => measure(() => Effect.runSync(step(chatParsed)), 1_000))
const stepRow = (name: string, m: { bytes: number; us: number }) =>
  `| ${name} | ${kb(m.bytes - fiberOnly.bytes)} · ${(m.us - fiberOnly.us).toFixed(2)} µs |`

const body = `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${
  os.cpus()[0]?.model.trim() ?? "cpu"
}, Node ${process.version}, load average ${os.loadavg()[0]!.toFixed(2)} at the end.
\`npm run bench:schema-decode\` (bench/schemaDecode/run.ts): one process; each body parsed once, then decoded with the
parser the forwarding lane's \`payloadDecoder\` runs (\`Schema.decodeUnknownEither\`, default options), the schema as
declared and its one-pass form (src/domain/onePassDecoding.ts; the same decoded value checked first); bytes
allocated a call (heap growth over batches of 1,000 with no collection inside, median of 9) and µs a call (median of 5
rounds of 20,000). JSON.parse of the same body, the baseline, in the same run.

| request | JSON.parse alone | decode, schema as declared | decode, one pass | one pass ÷ declared (bytes · µs) |
| --- | --- | --- | --- | --- |
${rows.join("\n")}

The decode as a step of the request's fiber (chat completion, gateway benchmark body, one-pass schema; a fiber that
only suspends, ${kb(fiberOnly.bytes)} · ${fiberOnly.us.toFixed(2)} µs, subtracted):

| step | bytes · µs a request |
| --- | --- |
${stepRow("before: the decode suspended, catchTag(ParseError) and catchAllDefect around it", beforeStep!)}
${stepRow("now: payloadDecoder (src/api/requestProblems.ts), made once, a plain function (its Either run as the effect)", nowStep!)}

Issue 26. "As declared" is how the forwarding lane decoded until this change: Effect makes a struct with optional
parameters that accept null (\`optionalParam\`) a transformation between a struct of \`X | null\` members and one of
\`X\` members, decoded in two passes with an Option and an Either per such member, absent or not (26 in a chat
request, nested structs included), and the second pass checks the whole struct again. "One pass" is what the lane
decodes now (\`onePassDecoding\`, made once per endpoint in src/handlers/forwarded.ts): the first struct decoded as
before, then one step that drops its null members (and gives FIM's defaults) on the first pass's fresh output. The
decoded values, key order, issues and messages are the same (test/domain/onePassDecoding.test.ts compares both over
every mutation of full requests). What is left of a small body's decode is Effect's parser itself (the struct's
output, an Either per member, the union of message kinds).
`
console.log(body)
if (process.env.BENCH_WRITE === "1") writeSection("Schema decode", body)
