// When each event of a server-sent stream reached the client, and what a set of such streams says: the time to the
// first event, the gaps between events, and the streams that stalled. Pure; the load itself is streamLoad.ts.
import { percentile } from "./load"

/**
 * Splits a stream's text into events as it arrives, noting the time at which each event became whole (the
 * chunk that brought its closing blank line), and whether the terminal `data: [DONE]` came.
 */
export class EventClock {
  private pending = ""
  readonly arrivals: Array<number> = []
  sawDone = false

  push(text: string, at: number): void {
    this.pending += text
    let end = this.pending.indexOf("\n\n")
    while (end !== -1) {
      if (this.pending.slice(0, end).includes("data: [DONE]")) this.sawDone = true
      this.arrivals.push(at)
      this.pending = this.pending.slice(end + 2)
      end = this.pending.indexOf("\n\n")
    }
  }
}

export interface StreamTiming {
  /** ms from sending the request to its first whole event; NaN when none came. */
  readonly firstEventMs: number
  /** ms between consecutive events. */
  readonly gapsMs: ReadonlyArray<number>
  /** Why the stream did not end well (status, socket error, no terminal event, cut at the deadline), if it did not. */
  readonly failure: string | undefined
}

/** One stream's timing from its start and its clock. */
export const timingOf = (startedAt: number, clock: EventClock, failure: string | undefined): StreamTiming => ({
  firstEventMs: clock.arrivals.length === 0 ? Number.NaN : clock.arrivals[0]! - startedAt,
  gapsMs: clock.arrivals.slice(1).map((at, i) => at - clock.arrivals[i]!),
  failure
})

export interface Spread {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

export interface StreamsSummary {
  readonly streams: number
  readonly completed: number
  /** Streams that stalled in any of the ways below (isStalled). */
  readonly stalled: number
  /** Streams with a gap between two events longer than the stall threshold. */
  readonly longGap: number
  /** Streams whose first event took longer than the stall threshold (or never came). */
  readonly lateFirstEvent: number
  /** Streams that did not end well, counted by reason. */
  readonly failures: ReadonlyMap<string, number>
  readonly firstEvent: Spread
  readonly gaps: Spread
}

const spread = (values: ReadonlyArray<number>): Spread => ({
  p50: percentile(values, 50),
  p99: percentile(values, 99),
  max: values.length === 0 ? Number.NaN : values.reduce((max, v) => (v > max ? v : max), -Infinity)
})

/** A stream stalled when it failed, its first event took longer than `stallMs`, or two of its events were further apart. */
export const isStalled = (timing: StreamTiming, stallMs: number): boolean =>
  timing.failure !== undefined || !(timing.firstEventMs <= stallMs) || timing.gapsMs.some((gap) => gap > stallMs)

export const summarise = (timings: ReadonlyArray<StreamTiming>, stallMs: number): StreamsSummary => {
  const failures = new Map<string, number>()
  for (const t of timings) if (t.failure !== undefined) failures.set(t.failure, (failures.get(t.failure) ?? 0) + 1)
  return {
    streams: timings.length,
    completed: timings.filter((t) => t.failure === undefined).length,
    stalled: timings.filter((t) => isStalled(t, stallMs)).length,
    longGap: timings.filter((t) => t.gapsMs.some((gap) => gap > stallMs)).length,
    lateFirstEvent: timings.filter((t) => !(t.firstEventMs <= stallMs)).length,
    failures,
    firstEvent: spread(timings.map((t) => t.firstEventMs).filter((ms) => !Number.isNaN(ms))),
    gaps: spread(timings.flatMap((t) => t.gapsMs))
  }
}
