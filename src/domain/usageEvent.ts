/**
 * The platform's activity events as the usage ledger records them (DESIGN.md), each `message` or
 * `workflow_run`: what an event is and which values it may hold. Their ingestion (a batch, its limits, the
 * first bad event reported) is the admin API's (src/api/schemas/events.ts).
 */
import { ParseResult, Schema } from "effect"
import { withoutNul } from "./fieldSchemas"

/** The ledger stores token counts as PostgreSQL `integer`. */
export const MAX_TOKEN_COUNT = 2_147_483_647

const bounded = (what: string, max: number) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => `${what} must be a non-empty string` }),
    Schema.maxLength(max, { message: () => `${what} must be at most ${max} characters` }),
    withoutNul(what)
  )

export const EventEntityId = bounded("an id", 200)
const EntityName = Schema.String.pipe(
  Schema.maxLength(500, { message: () => "a name must be at most 500 characters" }),
  withoutNul("a name")
)
const Email = Schema.String.pipe(
  Schema.maxLength(320, { message: () => "an email must be at most 320 characters" }),
  Schema.pattern(/^[^\s@\u0000]+@[^\s@\u0000]+$/, { message: () => "an email must look like local@domain" })
)
const TokenCount = Schema.Number.pipe(
  Schema.int({ message: () => "a token count must be an integer" }),
  Schema.between(0, MAX_TOKEN_COUNT, {
    message: () => `a token count must be between 0 and ${MAX_TOKEN_COUNT}`
  })
)

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/

const instantMessage = (text: string) =>
  `"${text}" is not an ISO 8601 instant with an offset or Z (e.g. 2026-01-05T10:00:00Z)`

/** A real calendar date-time (V8's Date.parse accepts 2026-02-30 and 24:00). */
const isCalendarDateTime = (match: RegExpExecArray): boolean => {
  const [, year, month, day, hour, minute, second] = match
  const y = Number(year)
  const m = Number(month)
  const daysInMonth = new Date(Date.UTC(y, m, 0)).getUTCDate()
  return (
    m >= 1 && m <= 12 && Number(day) >= 1 && Number(day) <= daysInMonth &&
    Number(hour) <= 23 && Number(minute) <= 59 && Number(second ?? 0) <= 59
  )
}

/** An ISO 8601 instant with an explicit offset or Z, decoded to a Date (millisecond precision). */
export const IsoInstant = Schema.transformOrFail(Schema.String, Schema.DateFromSelf, {
  strict: true,
  decode: (text, _, ast) => {
    const match = ISO_INSTANT.exec(text)
    const millis = match !== null && isCalendarDateTime(match) ? Date.parse(text) : Number.NaN
    return Number.isNaN(millis)
      ? ParseResult.fail(new ParseResult.Type(ast, text, instantMessage(text)))
      : ParseResult.succeed(new Date(millis))
  },
  encode: (date) => ParseResult.succeed(date.toISOString())
})

const optionalNullable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(schema, { nullable: true, exact: true })

export const EventUser = Schema.Struct({
  id: EventEntityId,
  email: optionalNullable(Email),
  name: optionalNullable(EntityName)
})
export type EventUser = typeof EventUser.Type

/** An assistant, project or workflow reference: id and its current name. */
export const EventNamedEntity = Schema.Struct({
  id: EventEntityId,
  name: EntityName
})
export type EventNamedEntity = typeof EventNamedEntity.Type

export const MessageEvent = Schema.Struct({
  type: Schema.Literal("message"),
  id: EventEntityId,
  occurredAt: IsoInstant,
  user: EventUser,
  assistant: optionalNullable(EventNamedEntity),
  project: optionalNullable(EventNamedEntity),
  model: bounded("a model id", 200),
  inputTokens: TokenCount,
  outputTokens: TokenCount,
  feature: optionalNullable(bounded("a feature", 100)),
  conversationId: optionalNullable(EventEntityId)
})
export type MessageEvent = typeof MessageEvent.Type

export const WorkflowRunEvent = Schema.Struct({
  type: Schema.Literal("workflow_run"),
  id: EventEntityId,
  workflow: EventNamedEntity,
  startedAt: IsoInstant,
  finishedAt: IsoInstant,
  status: Schema.Literal("succeeded", "failed"),
  user: optionalNullable(EventUser),
  project: optionalNullable(EventNamedEntity)
}).pipe(
  Schema.filter((run) =>
    run.finishedAt.getTime() >= run.startedAt.getTime()
      ? undefined
      : { path: ["finishedAt"], message: "finishedAt must not be before startedAt" }
  )
)
export type WorkflowRunEvent = typeof WorkflowRunEvent.Type

export const UsageEvent = Schema.Union(MessageEvent, WorkflowRunEvent)
export type UsageEvent = typeof UsageEvent.Type
