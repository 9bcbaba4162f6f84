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
import { MessageEvent, UsageEvent, WorkflowRunEvent } from "../../domain/usageEvent"

export const MAX_EVENTS_PER_BATCH = 10_000

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
