import { describe, expect, it } from "vitest"
import { apportion, defaultDemoOptions, demoEvents, type DemoOptions } from "../../src/cli/demoData"

const options = (overrides: Partial<DemoOptions>): DemoOptions => ({ ...defaultDemoOptions, ...overrides })

describe("demo activity", () => {
  it("has exactly the number of events asked for, whatever the number of users and days", () => {
    for (const overrides of [
      { events: 4000, users: 40, days: 21 },
      { events: 100_000, users: 200, days: 90 },
      { events: 1, users: 1, days: 1 },
      { events: 777, users: 5000, days: 3 },
      { events: 5000, users: 10, days: 30, workflows: 0 }
    ]) {
      const events = [...demoEvents(options(overrides))]
      expect(events.length, JSON.stringify(overrides)).toBe(overrides.events)
      expect(new Set(events.map((e) => e.id)).size, "unique ids").toBe(events.length)
    }
  })

  it("keeps the shares and the weekly rhythm: about 5 % workflow runs, weekends quieter than weekdays", () => {
    const events = [...demoEvents(options({ events: 20_000, users: 300, days: 28, startDate: "2026-03-02" }))]
    const runs = events.filter((e) => e.type === "workflow_run").length
    expect(runs).toBe(1000)
    const byWeekday = Array.from({ length: 7 }, () => 0)
    for (const e of events) if (e.type === "message") byWeekday[new Date(e.occurredAt).getUTCDay()]!++
    const [sunday, monday] = [byWeekday[0]!, byWeekday[1]!]
    expect(monday).toBeGreaterThan(sunday * 4)
  })

  it("is deterministic: the same options give the same events", () => {
    const a = [...demoEvents(options({ events: 3000, users: 50, days: 10 }))]
    const b = [...demoEvents(options({ events: 3000, users: 50, days: 10 }))]
    expect(b).toEqual(a)
  })

  it("shares a total in proportion to weights, in whole numbers adding up to it", () => {
    expect(apportion(10, [1, 1, 1])).toEqual([4, 3, 3])
    expect(apportion(7, [1, 0.2, 0.12])).toEqual([5, 1, 1])
    expect(apportion(0, [1, 2])).toEqual([0, 0])
    expect(apportion(5, [])).toEqual([])
    expect(apportion(100, [3, 1]).reduce((a, b) => a + b, 0)).toBe(100)
  })
})
