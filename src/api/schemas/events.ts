/**
 * The ingestion payload of `POST /admin/workspaces/{id}/events`: `{ events: [...] }`, at most 10,000
 * platform activity events (DESIGN.md), each `message` or `workflow_run`.
 *
 * Additions to DESIGN.md's event shapes, all optional:
 * - `conversationId` on message events: feeds the `conversations` columns of the users and
 *   assistants exports (messages without it are not counted as conversations);
 * - `feature` on message events (already in DESIGN.md): feeds `features_used`.
 * `null` is accepted for every optional field and means absent. Unknown properties of an event are ignored
 * (events are the platform's records, which may grow fields this service does not know yet); an unknown key
 * beside `events` is refused, as in every admin body.
 *
 * A batch is all or nothing: `validateEventBatch` reports the FIRST bad event with its index and the
 * offending field path (`events[17].occurredAt`), and then nothing of the batch may be written.
 */
import { Either, ParseResult, Schema } from "effect"
import { withoutNul } from "../../domain/fieldSchemas"

export const MAX_EVENTS_PER_BATCH = 10_000
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

export const IngestEventsPayload = Schema.Struct({
  events: Schema.Array(UsageEvent).pipe(
    Schema.maxItems(MAX_EVENTS_PER_BATCH, {
      message: () => `a batch holds at most ${MAX_EVENTS_PER_BATCH} events; split it`
    })
  )
})
export type IngestEventsPayload = typeof IngestEventsPayload.Type

/** The first problem of a rejected batch; `index` is null when the envelope itself is wrong. */
export class InvalidEventBatch extends Schema.TaggedError<InvalidEventBatch>()("InvalidEventBatch", {
  index: Schema.NullOr(Schema.Int),
  field: Schema.String,
  message: Schema.String
}) {}

const decodeMessage = Schema.decodeUnknownEither(MessageEvent, { errors: "first" })
const decodeWorkflowRun = Schema.decodeUnknownEither(WorkflowRunEvent, { errors: "first" })

const fieldPath = (base: string, path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : `${acc}.${String(key)}`),
    base
  )

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const rejectEvent = (index: number, path: ReadonlyArray<PropertyKey>, message: string) =>
  Either.left(new InvalidEventBatch({ index, field: fieldPath(`events[${index}]`, path), message }))

const validateEvent = (event: unknown, index: number): Either.Either<UsageEvent, InvalidEventBatch> => {
  if (!isRecord(event)) return rejectEvent(index, [], "an event must be a JSON object")
  const decoded: Either.Either<UsageEvent, ParseResult.ParseError> | undefined =
    event.type === "message"
      ? decodeMessage(event)
      : event.type === "workflow_run"
        ? decodeWorkflowRun(event)
        : undefined
  if (decoded === undefined) {
    return rejectEvent(index, ["type"], 'type must be "message" or "workflow_run"')
  }
  return Either.mapLeft(decoded, (error) => {
    const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
    return new InvalidEventBatch({
      index,
      field: fieldPath(`events[${index}]`, issue?.path ?? []),
      message: issue?.message ?? "invalid event"
    })
  })
}

/**
 * Validates a whole ingestion body. Events are checked in order, and the first bad one is reported:
 * `{ index: 17, field: "events[17].occurredAt", message }`. Too many events, or no `events` array,
 * is reported with `index: null` and `field: "events"`.
 */
export const validateEventBatch = (body: unknown): Either.Either<IngestEventsPayload, InvalidEventBatch> => {
  if (!isRecord(body) || !Array.isArray(body.events)) {
    return Either.left(
      new InvalidEventBatch({ index: null, field: "events", message: "the body must be { events: [...] }" })
    )
  }
  const events: ReadonlyArray<unknown> = body.events
  // The envelope is the admin API's own and refuses an unknown key like every admin body; the events
  // inside are another system's records and keep their unknown properties ignored (see the top).
  const unknown = Object.keys(body).filter((key) => key !== "events")
  if (unknown.length > 0) {
    return Either.left(
      new InvalidEventBatch({
        index: null,
        field: unknown[0]!,
        message: `Unknown parameter${unknown.length > 1 ? "s" : ""}: ${unknown.map((key) => `'${key}'`).join(", ")} (expected events).`
      })
    )
  }
  if (events.length > MAX_EVENTS_PER_BATCH) {
    return Either.left(
      new InvalidEventBatch({
        index: null,
        field: "events",
        message: `a batch holds at most ${MAX_EVENTS_PER_BATCH} events, got ${events.length}; split it`
      })
    )
  }
  const valid: Array<UsageEvent> = []
  for (let index = 0; index < events.length; index++) {
    const result = validateEvent(events[index], index)
    if (Either.isLeft(result)) return Either.left(result.left)
    valid.push(result.right)
  }
  return Either.right({ events: valid })
}
