import { HttpApiError } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import {
  fromFormatterIssues,
  fromParseError,
  malformedJsonIssue,
  wirePath
} from "../../src/domain/validationIssue"
import { strictParse } from "../../src/domain/workspaceSettings"

const issueFor = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => {
  const result = Schema.decodeUnknownEither(schema)(input)
  if (Either.isRight(result)) throw new Error("expected a decode failure")
  return fromParseError(result.left)
}

describe("wirePath", () => {
  it.each([
    [[], null],
    [["temperature"], "temperature"],
    [["messages", 0, "role"], "messages[0].role"],
    [["tools", 3, "function", "parameters"], "tools[3].function.parameters"],
    [["input", 2], "input[2]"],
    [["input", 1, 0], "input[1][0]"]
  ] as const)("%j → %s", (path, expected) => {
    expect(wirePath(path)).toBe(expected)
  })
})

describe("malformedJsonIssue", () => {
  it("names no parameter", () => {
    expect(malformedJsonIssue).toEqual({ param: null, message: "We could not parse the JSON body of your request." })
  })
})

describe("fromParseError", () => {
  const Body = Schema.Struct({
    role: Schema.Literal("system", "user"),
    count: Schema.Number.pipe(Schema.between(0, 2, { message: () => "count must be between 0 and 2." })),
    parts: Schema.optional(Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }))),
    content: Schema.optional(Schema.Union(
      Schema.String,
      Schema.Array(Schema.Struct({ url: Schema.String })).annotations({ title: "an array of links" })
    ))
  })
  const valid = { role: "user", count: 1 }

  it("reports a missing field as the providers do", () => {
    expect(issueFor(Body, { count: 1 })).toEqual({ param: "role", message: "Missing required parameter: 'role'." })
  })

  it("uses the schema's custom message", () => {
    expect(issueFor(Body, { ...valid, count: 3 })).toEqual({ param: "count", message: "count must be between 0 and 2." })
  })

  it("lists literal alternatives", () => {
    expect(issueFor(Body, { ...valid, role: "bot" })).toEqual({
      param: "role",
      message: "role: expected one of system, user, got \"bot\""
    })
  })

  it("describes a wrong type in plain words", () => {
    expect(issueFor(Body, { ...valid, parts: [{ type: "text", text: 5 }] })).toEqual({
      param: "parts[0].text",
      message: "parts[0].text: expected a string, got 5"
    })
    expect(issueFor(Body, { ...valid, parts: "text" })).toEqual({
      param: "parts",
      message: "parts: expected an array, got \"text\""
    })
  })

  it("names every union alternative by its title, leaving out undefined", () => {
    expect(issueFor(Body, { ...valid, content: 5 })).toEqual({
      param: "content",
      message: "content: expected a string or an array of links, got 5"
    })
  })

  it("prefers the union member that matched deepest", () => {
    expect(issueFor(Body, { ...valid, content: [{ url: 1 }] })).toEqual({
      param: "content[0].url",
      message: "content[0].url: expected a string, got 1"
    })
  })

  it("reports a body that is not an object", () => {
    expect(issueFor(Body, "hello")).toEqual({ param: null, message: "The request body must be a JSON object." })
  })

  it("gives the same answer from an HttpApiDecodeError's issues", () => {
    const result = Schema.decodeUnknownEither(Body)({ ...valid, parts: [{ type: "text" }] })
    if (Either.isRight(result)) throw new Error("expected a decode failure")
    const decodeError = Effect.runSync(HttpApiError.HttpApiDecodeError.fromParseError(result.left))
    expect(fromFormatterIssues(decodeError.issues)).toEqual(fromParseError(result.left))
    expect(fromFormatterIssues(decodeError.issues)).toEqual({
      param: "parts[0].text",
      message: "Missing required parameter: 'parts[0].text'."
    })
  })
})

describe("fromFormatterIssues", () => {
  it("answers something for an empty list", () => {
    expect(fromFormatterIssues([])).toEqual({ param: null, message: "The request body is invalid." })
  })

  it("returns a message that is not Effect's default wording as it is", () => {
    expect(fromFormatterIssues([{ _tag: "Type", path: ["a"], message: "a must be odd." }])).toEqual({
      param: "a",
      message: "a must be odd."
    })
  })

  it("names an unknown field, with the known ones when Effect lists them", () => {
    expect(fromFormatterIssues([{ _tag: "Unexpected", path: ["extra"], message: "is unexpected" }])).toEqual({
      param: "extra",
      message: "Unknown parameter: 'extra'."
    })
    expect(fromFormatterIssues([{ _tag: "Unexpected", path: ["limits", "fam"], message: 'is unexpected, expected: "families" | "models"' }]))
      .toEqual({ param: "limits.fam", message: "Unknown parameter: 'limits.fam' (expected one of families, models)." })
  })

  it("names every unknown field of a strict body (strictParse decodes with errors: all), beside a missing one", () => {
    const Key = Schema.Struct({ name: Schema.String, scopes: Schema.Array(Schema.String) }).annotations(strictParse)
    expect(issueFor(Key, { name: "k", scopes: [], expiresAt: "2030-01-01", budgetUsd: 5 })).toEqual({
      param: "expiresAt",
      message: "Unknown parameters: 'expiresAt', 'budgetUsd' (expected one of name, scopes)."
    })
    expect(issueFor(Key, { scopes: [], expiresAt: "2030-01-01" })).toEqual({
      param: "expiresAt",
      message: "Unknown parameter: 'expiresAt' (expected one of name, scopes)."
    })
  })

  it("in a union of strict bodies, names the unknown fields of the member the caller meant (the fewest refused)", () => {
    const SignIn = Schema.Union(
      Schema.Struct({ email: Schema.String, password: Schema.String }),
      Schema.Struct({ adminToken: Schema.String })
    ).annotations(strictParse)
    expect(issueFor(SignIn, { email: "a@b.c", password: "p", remember: true }))
      .toEqual({ param: "remember", message: "Unknown parameter: 'remember' (expected one of email, password)." })
    expect(issueFor(SignIn, { adminToken: "t", remember: true }))
      .toEqual({ param: "remember", message: "Unknown parameter: 'remember' (expected one of adminToken)." })
  })

  it("cuts long values", () => {
    const long = `"${"x".repeat(200)}"`
    const issue = fromFormatterIssues([{ _tag: "Type", path: ["a"], message: `Expected string, actual ${long}` }])
    expect(issue.message).toBe(`a: expected a string, got ${long.slice(0, 77)}...`)
  })
})
