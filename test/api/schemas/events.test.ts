import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { IngestEventsPayload, MAX_EVENTS_PER_BATCH, validateEventBatch } from "../../../src/api/schemas/events"
import type { UsageEvent } from "../../../src/domain/usageEvent"

const message = (id: string) => ({
  type: "message",
  id,
  occurredAt: "2026-01-05T10:00:00Z",
  user: { id: "u-1", email: "ann@example.com", name: "Ann" },
  assistant: { id: "a-1", name: "Helper" },
  project: { id: "p-1", name: "Launch" },
  model: "chatgen-4o",
  inputTokens: 120,
  outputTokens: 300,
  feature: "chat",
  conversationId: "c-1"
})

const workflowRun = (id: string) => ({
  type: "workflow_run",
  id,
  workflow: { id: "w-1", name: "Nightly report" },
  startedAt: "2026-01-05T10:00:00+01:00",
  finishedAt: "2026-01-05T09:05:30.5Z",
  status: "succeeded",
  user: { id: "u-1" }
})

const rejection = (body: unknown) => {
  const result = validateEventBatch(body)
  if (Either.isRight(result)) return expect.fail("expected the batch to be rejected")
  return result.left
}

const withEventAt = (index: number, bad: unknown) => ({
  events: Array.from({ length: 20 }, (_, i) => (i === index ? bad : i % 2 === 0 ? message(`m-${i}`) : workflowRun(`r-${i}`)))
})

describe("validateEventBatch", () => {
  it("accepts a good batch and decodes instants", () => {
    const result = validateEventBatch({
      events: [message("m-1"), workflowRun("r-1"), { ...message("m-2"), assistant: null, feature: null }]
    })
    if (Either.isLeft(result)) return expect.fail(JSON.stringify(result.left))
    const [first, second, third] = result.right.events as ReadonlyArray<UsageEvent>
    expect(first?.type).toBe("message")
    expect(first?.type === "message" && first.occurredAt.toISOString()).toBe("2026-01-05T10:00:00.000Z")
    expect(second?.type === "workflow_run" && second.startedAt.toISOString()).toBe("2026-01-05T09:00:00.000Z")
    expect(third?.type === "message" && "assistant" in third).toBe(false)
  })

  it("accepts an empty batch", () => {
    expect(Either.isRight(validateEventBatch({ events: [] }))).toBe(true)
  })

  it("names the index and field of the first bad event", () => {
    const error = rejection(withEventAt(17, { ...message("m-17"), occurredAt: "2026-01-05 10:00" }))
    expect(error._tag).toBe("InvalidEventBatch")
    expect(error.index).toBe(17)
    expect(error.field).toBe("events[17].occurredAt")
    expect(error.message).toContain("ISO 8601")
  })

  it("names nested fields", () => {
    const error = rejection(withEventAt(3, { ...message("m-3"), user: { id: "" } }))
    expect(error.index).toBe(3)
    expect(error.field).toBe("events[3].user.id")
  })

  it.each([
    ["a missing id", { ...message("x"), id: undefined }, "id"],
    ["an overlong id", { ...message("x"), id: "x".repeat(201) }, "id"],
    ["negative tokens", { ...message("x"), inputTokens: -1 }, "inputTokens"],
    ["fractional tokens", { ...message("x"), outputTokens: 1.5 }, "outputTokens"],
    ["an unknown type", { ...message("x"), type: "click" }, "type"],
    ["an instant without offset", { ...message("x"), occurredAt: "2026-01-05T10:00:00" }, "occurredAt"],
    ["an impossible date", { ...message("x"), occurredAt: "2026-02-30T10:00:00Z" }, "occurredAt"],
    ["an unknown status", { ...workflowRun("x"), status: "running" }, "status"],
    ["finishedAt before startedAt", { ...workflowRun("x"), finishedAt: "2026-01-05T08:59:59Z" }, "finishedAt"],
    ["a malformed email", { ...message("x"), user: { id: "u", email: "not-an-email" } }, "user.email"]
  ])("rejects %s", (_, event, field) => {
    const error = rejection({ events: [message("ok"), event] })
    expect(error.index).toBe(1)
    expect(error.field).toBe(`events[1].${field}`)
  })

  it("rejects a non-object event", () => {
    const error = rejection({ events: [42] })
    expect(error.index).toBe(0)
    expect(error.field).toBe("events[0]")
  })

  it("rejects a body without an events array", () => {
    const error = rejection({ items: [] })
    expect(error.index).toBeNull()
    expect(error.field).toBe("events")
  })

  it(`accepts ${MAX_EVENTS_PER_BATCH} events and rejects ${MAX_EVENTS_PER_BATCH + 1}`, () => {
    const events = Array.from({ length: MAX_EVENTS_PER_BATCH }, (_, i) => message(`m-${i}`))
    const accepted = validateEventBatch({ events })
    expect(Either.isRight(accepted) && accepted.right.events.length).toBe(MAX_EVENTS_PER_BATCH)
    const error = rejection({ events: [...events, message("one-too-many")] })
    expect(error.index).toBeNull()
    expect(error.field).toBe("events")
    expect(error.message).toContain(String(MAX_EVENTS_PER_BATCH + 1))
  })
})

describe("IngestEventsPayload schema", () => {
  it("agrees with validateEventBatch on a good and an oversized batch", () => {
    const decode = Schema.decodeUnknownEither(IngestEventsPayload)
    expect(Either.isRight(decode({ events: [message("m-1"), workflowRun("r-1")] }))).toBe(true)
    const tooMany = Array.from({ length: MAX_EVENTS_PER_BATCH + 1 }, (_, i) => message(`m-${i}`))
    expect(Either.isLeft(decode({ events: tooMany }))).toBe(true)
  })
})
