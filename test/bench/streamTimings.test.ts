import { describe, expect, it } from "vitest"
import { EventClock, isStalled, summarise, timingOf } from "../../bench/gateway/streamTimings"

const event = (data: string) => `data: ${data}\n\n`

describe("EventClock", () => {
  it("times an event by the chunk that completes it, however the bytes are split", () => {
    const clock = new EventClock()
    const whole = event('{"n":1}') + event('{"n":2}')
    // The first event is 15 characters; its closing blank line comes with the second piece, split between two reads.
    clock.push(whole.slice(0, 14), 10)
    expect(clock.arrivals).toEqual([])
    clock.push(whole.slice(14, 20), 20)
    expect(clock.arrivals).toEqual([20])
    clock.push(whole.slice(20, 29), 70)
    clock.push(whole.slice(29), 120)
    expect(clock.arrivals).toEqual([20, 120])
    expect(clock.sawDone).toBe(false)
  })

  it("gives events that arrive in one read the same time, and notes the terminal event", () => {
    const clock = new EventClock()
    clock.push(event("{}") + event("{}") + event("[DONE]"), 5)
    expect(clock.arrivals).toEqual([5, 5, 5])
    expect(clock.sawDone).toBe(true)
  })
})

describe("summarise", () => {
  const clockAt = (times: ReadonlyArray<number>) => {
    const clock = new EventClock()
    for (const at of times) clock.push(event("{}"), at)
    return clock
  }

  it("measures the first event from the request and the gaps between events", () => {
    const timing = timingOf(100, clockAt([103, 153, 204, 260]), undefined)
    expect(timing.firstEventMs).toBe(3)
    expect(timing.gapsMs).toEqual([50, 51, 56])
  })

  it("counts a stream as stalled by a long gap, a late or missing first event, or a failure", () => {
    const steady = timingOf(0, clockAt([2, 52, 102]), undefined)
    const longGap = timingOf(0, clockAt([2, 52, 1102]), undefined)
    const lateStart = timingOf(0, clockAt([1500, 1550]), undefined)
    const nothing = timingOf(0, clockAt([]), "unfinished at the deadline")
    const failed = timingOf(0, clockAt([2, 52]), "ECONNRESET")
    expect([steady, longGap, lateStart, nothing, failed].map((t) => isStalled(t, 1000))).toEqual([false, true, true, true, true])

    const summary = summarise([steady, longGap, lateStart, nothing, failed], 1000)
    expect(summary).toMatchObject({ streams: 5, completed: 3, stalled: 4, longGap: 1, lateFirstEvent: 2 })
    expect([...summary.failures]).toEqual([["unfinished at the deadline", 1], ["ECONNRESET", 1]])
    expect(summary.gaps.max).toBe(1050)
    expect(summary.firstEvent.p50).toBe(2)
    expect(summary.firstEvent.max).toBe(1500)
  })

  it("reports nothing measured as NaN rather than zero", () => {
    const summary = summarise([timingOf(0, clockAt([]), "status 503")], 1000)
    expect(summary.gaps.p99).toBeNaN()
    expect(summary.firstEvent.max).toBeNaN()
  })
})
