import { Effect, Schema } from "effect"
import { IngestEventsResult } from "../api/adminApi"
import { MAX_EVENTS_PER_BATCH } from "../api/schemas/events"
import { type DemoEvent, demoDays, type DemoOptions } from "./demoData"
import { checkUrl, CliRequestFailed, postJson } from "./adminCall"
import { makeProgressBar } from "./progressBar"

export interface SeedSummary {
  readonly workspaceId: string
  readonly events: number
  readonly accepted: number
  readonly duplicates: number
  readonly seconds: number
}

/**
 * Generates demo activity (demoData) and ingests it through the admin events endpoint in batches
 * of 10,000, with a progress bar by day. Deterministic: seeding again with the same options adds
 * nothing (every event comes back as a duplicate).
 */
export const seedWorkspace = (args: {
  readonly baseUrl: string
  readonly adminToken: string
  readonly workspaceId: string
  readonly options: DemoOptions
}) =>
  Effect.gen(function*() {
    const url = `${args.baseUrl}/admin/workspaces/${args.workspaceId}/events`
    const bar = makeProgressBar("seeding")
    const started = Date.now()
    let events = 0
    let accepted = 0
    let duplicates = 0
    let pending: Array<DemoEvent> = []
    const send = Effect.suspend(() => {
      const batch = pending
      pending = []
      return batch.length === 0
        ? Effect.void
        : postJson(url, args.adminToken, JSON.stringify({ events: batch })).pipe(
          Effect.flatMap(Schema.decodeUnknown(IngestEventsResult)),
          Effect.mapError((error) =>
            error._tag === "ParseError" ? new CliRequestFailed({ message: `POST ${url} answered JSON that is not the admin API's answer: ${checkUrl}` }) : error
          ),
          Effect.map((answer) => {
            accepted += answer.accepted
            duplicates += answer.duplicates
          })
        )
    })
    let day = 0
    for (const dayEvents of demoDays(args.options)) {
      day++
      for (const event of dayEvents) {
        pending.push(event)
        events++
        if (pending.length === MAX_EVENTS_PER_BATCH) yield* send
      }
      const seconds = Math.max(0.001, (Date.now() - started) / 1000)
      yield* bar.update(day, args.options.days, `day ${day}/${args.options.days} · ${events.toLocaleString("en")} events · ${Math.round(events / seconds).toLocaleString("en")} events/s`)
    }
    yield* send
    yield* bar.done
    const summary: SeedSummary = {
      workspaceId: args.workspaceId,
      events,
      accepted,
      duplicates,
      seconds: Math.round((Date.now() - started) / 100) / 10
    }
    return summary
  })
