// provider_c FIM completions: the code between prompt and suffix, as a chat.completion-shaped object or as
// data-only chunk events ending in [DONE].
import { Clock, Effect, Schema } from "effect"
import { fimModels } from "../catalog"
import { randomFor } from "../deterministic"
import { eventsReply, jsonReply, type SimulatedEndpoint } from "../endpoint"
import { randomId } from "../ids"
import { integerBetween, numberBetween } from "../rangeChecks"
import { decodeRequest, rejectUnknownFields } from "../requestBody"
import { SimulatorError } from "../simulatorError"
import { dataEvent, doneEvent } from "../../domain/sse"
import { chunkPieces, generateCode, shapeOutput } from "../textGenerator"
import { SimulatorTokenizer } from "../tokenizer"
import { providerCDialect } from "./dialect"

const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

export const FimRequest = Schema.Struct({
  model: Schema.String,
  prompt: Schema.String,
  suffix: nullable(Schema.String),
  temperature: nullable(numberBetween(0, 1.5)),
  top_p: Schema.optional(numberBetween(0, 1)),
  max_tokens: nullable(integerBetween(0)),
  min_tokens: nullable(integerBetween(0)),
  stream: Schema.optional(Schema.Boolean),
  stop: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
  random_seed: nullable(integerBetween(0)),
  metadata: nullable(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  prompt_cache_key: nullable(Schema.String)
})
export type FimRequest = typeof FimRequest.Type

export const fimCompletionsEndpoint: SimulatedEndpoint<SimulatorTokenizer> = {
  dialect: providerCDialect,
  answer: (body, context) =>
    Effect.gen(function* () {
      const counter = yield* SimulatorTokenizer
      yield* rejectUnknownFields(body, new Set(Object.keys(FimRequest.fields)), () => "Extra inputs are not permitted", "unprocessable")
      const request = yield* decodeRequest(FimRequest, body, "unprocessable")
      const model = fimModels.get(request.model)
      if (model === undefined) {
        return yield* new SimulatorError({ kind: "invalid_request", message: `Invalid model: ${request.model}`, code: "invalid_model" })
      }
      const suffix = request.suffix ?? ""
      const promptTokens = counter.count(request.prompt) + counter.count(suffix) + 3
      const maxTokens = request.max_tokens ?? undefined
      if (promptTokens + (maxTokens ?? 0) > model.contextWindow) {
        return yield* new SimulatorError({
          kind: "invalid_request",
          message: `Prompt contains ${promptTokens} tokens and ${maxTokens ?? 0} draft tokens, too large for model with ${model.contextWindow} maximum context length`
        })
      }
      const { stream: _stream, ...significant } = body
      const random = randomFor(JSON.stringify(significant), "fim")
      const wanted = Math.max(context.controls.outputTokens ?? random.int(12, 64), request.min_tokens ?? 0)
      const generated =
        context.controls.reply === "echo" ? request.prompt : generateCode(random, { prompt: request.prompt, suffix }, wanted)
      // The code generator works in whole lines; an exact requested length is cut from it.
      const sized =
        context.controls.outputTokens === undefined ? generated : shapeOutput(generated, counter, { maxTokens: wanted }).text
      const stop = request.stop === undefined ? [] : typeof request.stop === "string" ? [request.stop] : request.stop
      const output = shapeOutput(sized, counter, { maxTokens, stop })
      const finishReason = output.stoppedBy === "max_tokens" ? "length" : "stop"
      const usage = { prompt_tokens: promptTokens, completion_tokens: output.tokens, total_tokens: promptTokens + output.tokens }
      const id = yield* randomId("", 32, "hex")
      const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      if (request.stream !== true) {
        return jsonReply({
          id,
          object: "chat.completion",
          model: request.model,
          usage,
          created,
          choices: [
            { index: 0, message: { role: "assistant", tool_calls: null, content: output.text, prefix: false }, finish_reason: finishReason }
          ]
        })
      }
      const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
        dataEvent({
          id,
          object: "chat.completion.chunk",
          created,
          model: request.model,
          choices: [{ index: 0, delta, finish_reason: finish }],
          ...extra
        })
      return eventsReply([
        chunk({ role: "assistant", content: "" }, null),
        ...chunkPieces(output.pieces, context.controls.chunkTokens).map((piece) => chunk({ content: piece.text }, null)),
        chunk({ content: "" }, finishReason, { usage }),
        doneEvent
      ])
    })
}
