import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { payloadDecoder } from "../../src/api/requestProblems"
import { onePassDecoding } from "../../src/domain/onePassDecoding"
import { ChatCompletionRequest } from "../../src/providers/providerA/chatCompletionsWire"

const decode = payloadDecoder(onePassDecoding(ChatCompletionRequest))
const minimal = { model: "chatgen-4o", messages: [{ role: "user", content: "Hello" }] }

const problemOf = (body: unknown) =>
  Effect.flip(decode(body)).pipe(Effect.map((refusal) => refusal.problem))

describe("payloadDecoder", () => {
  it.effect("gives the decoded payload, null parameters absent", () =>
    Effect.gen(function*() {
      expect(yield* decode({ ...minimal, temperature: null, top_p: 0.5 })).toEqual({ ...minimal, top_p: 0.5 })
    }))

  it.effect("refuses a bad field with the 400 HttpApi would answer, naming it", () =>
    Effect.gen(function*() {
      expect(yield* problemOf({ ...minimal, temperature: 3 })).toEqual({
        status: 400,
        code: "invalid_value",
        message: "temperature must be a number between 0 and 2, got 3.",
        param: "temperature"
      })
      expect(yield* problemOf({ messages: minimal.messages })).toMatchObject({ code: "missing_required_parameter", param: "model" })
    }))

  it.effect("refuses, as a 400 and not a defect, a body that makes the parser throw", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(decode({ ...minimal, messages: [{ role: "user", content: [{ type: { toString: 0 } }] }] }))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.problem : exit).toMatchObject({
        status: 400,
        code: "invalid_request"
      })
    }))
})
