import { describe, expect, it } from "vitest"
import { builtInCatalog, MODEL_CATALOG } from "../../src/domain/models"
import type { ModelFamily } from "../../src/domain/models"
import type { ProviderId } from "../../src/domain/providerId"
import { cannotFit, maxTokenBytes, sliceChars, sliceEnd, textSlices, tooManyMessages, tooManyRawMessages } from "../../src/domain/requestBounds"
import { providerA } from "../../src/providers/providerA/dialect"
import { problemOf } from "../../src/providers/render"

/** The refusals as provider_a answers them. */
const messageCountProblem = (provider: ProviderId, family: ModelFamily, body: unknown) => {
  const refusal = tooManyMessages(builtInCatalog, provider, family, body)
  return refusal === undefined ? undefined : problemOf(providerA, refusal)
}
const rawMessageCountProblem = (provider: ProviderId, family: ModelFamily, body: Buffer) => {
  const refusal = tooManyRawMessages(builtInCatalog, provider, family, body)
  return refusal === undefined ? undefined : problemOf(providerA, refusal)
}

describe("message-count bounds", () => {
  it("refuses more messages than the model's context can hold at three tokens each", () => {
    const messages = Array.from({ length: 42_667 }, () => ({ role: "user", content: "" }))
    expect(messageCountProblem("provider_a", "chat_completions", { model: "chatgen-4o", messages })).toMatchObject({
      status: 400,
      code: "context_length_exceeded",
      param: "messages"
    })
    expect(messageCountProblem("provider_a", "chat_completions", { model: "chatgen-4o", messages: messages.slice(1) })).toBeUndefined()
    expect(messageCountProblem("provider_a", "chat_completions", { model: "chatgen-4o", messages: "not a list" })).toBeUndefined()
  })

  it("counts role keys in raw bytes, not a role quoted inside a string", () => {
    const quoted = JSON.stringify({ messages: [{ role: "user", content: '{"role":"user"}'.repeat(200_000) }] })
    expect(rawMessageCountProblem("provider_a", "chat_completions", Buffer.from(quoted))).toBeUndefined()
    const most = Math.max(...MODEL_CATALOG.map((model) => model.contextLength)) / 3
    const many = JSON.stringify({ messages: Array.from({ length: Math.ceil(most) + 1 }, () => ({ role: "user", content: "" })) })
    expect(rawMessageCountProblem("provider_a", "chat_completions", Buffer.from(many))).toMatchObject({ code: "context_length_exceeded", param: "messages" })
  })

  it("judges the raw count against the largest context of the models the body names", () => {
    const body = (model: string, extra: Record<string, unknown> = {}) =>
      Buffer.from(JSON.stringify({ model, ...extra, messages: Array.from({ length: 50_000 }, () => ({ role: "user", content: "" })) }))
    // 150,000 tokens at least: over chatgen-4o's 128,000, under an unknown model's largest context.
    expect(rawMessageCountProblem("provider_a", "chat_completions", body("chatgen-4o"))).toMatchObject({ param: "messages" })
    expect(rawMessageCountProblem("provider_a", "chat_completions", body("my-own-model"))).toBeUndefined()
    // A second, larger model named elsewhere in the body wins: never stricter than the request's own.
    expect(rawMessageCountProblem("provider_a", "chat_completions", body("chatgen-4o", { metadata: { model: "chatgen-5" } }))).toBeUndefined()
  })
})

describe("slices of a long text", () => {
  it("end after a line break, else a space, in the slice's second half; else a hard cut", () => {
    const breakLate = "x".repeat(sliceChars - 100) + "\n" + "y".repeat(sliceChars)
    expect(sliceEnd(breakLate, 0)).toBe(sliceChars - 99)
    // A break in the first half only, or none: cut at the size, the text before the start never searched.
    const breakEarly = "x".repeat(100) + "\n" + "y".repeat(2 * sliceChars)
    expect(sliceEnd(breakEarly, 0)).toBe(sliceChars)
    expect(sliceEnd(breakEarly, 50)).toBe(50 + sliceChars)
    const spaced = ("word ".repeat(sliceChars / 5) + "tail").repeat(3)
    expect(spaced[sliceEnd(spaced, 0) - 1]).toBe(" ")
    const unbroken = "a".repeat(9 * sliceChars + 7)
    expect(textSlices(unbroken).map((slice) => slice.length)).toEqual([...Array(9).fill(sliceChars), 7])
    expect(textSlices("")).toEqual([""])
  })
})

describe("the length bound", () => {
  it("refuses only what no count could fit: more characters than the context's tokens can hold", () => {
    expect(cannotFit(128_000 * maxTokenBytes, 128_000)).toBe(false)
    expect(cannotFit(128_000 * maxTokenBytes + 1, 128_000)).toBe(true)
  })
})
