import { describe, expect, it } from "vitest"
import { attemptOrder, type Candidate, failsOver } from "../../src/domain/attemptOrder"

/** A seeded random (mulberry32): the draws are the same on every run, so the tolerances below cannot flake. */
const seeded = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const candidate = (name: string, priority = 0, weight = 1): Candidate => ({ name, priority, weight })
const names = (order: ReadonlyArray<Candidate>) => order.map((c) => c.name)
const noCooling = () => undefined
const now = 1_000_000

describe("attemptOrder", () => {
  it("tries lower priorities first, whatever the file's order and the draws", () => {
    const candidates = [candidate("backup", 2), candidate("main", 0), candidate("second", 1)]
    const random = seeded(1)
    for (let draw = 0; draw < 50; draw++) {
      expect(names(attemptOrder(candidates, noCooling, now, 10, random))).toEqual(["main", "second", "backup"])
    }
  })

  it("draws the first of a priority in proportion to the weights, and lists every one of them once", () => {
    const candidates = [candidate("heavy", 0, 3), candidate("light", 0, 1), candidate("spare", 1, 5)]
    const random = seeded(42)
    const draws = 10_000
    let heavyFirst = 0
    for (let draw = 0; draw < draws; draw++) {
      const order = names(attemptOrder(candidates, noCooling, now, 10, random))
      expect([...order].slice(0, 2).sort()).toEqual(["heavy", "light"])
      // A weight never lifts a deployment over a lower priority.
      expect(order[2]).toBe("spare")
      if (order[0] === "heavy") heavyFirst += 1
    }
    // 3 : 1 → 75 % first, within two points.
    expect(heavyFirst / draws).toBeGreaterThan(0.73)
    expect(heavyFirst / draws).toBeLessThan(0.77)
  })

  it("gives equal weights equal shares", () => {
    const candidates = [candidate("a"), candidate("b"), candidate("c")]
    const random = seeded(7)
    const first = new Map<string, number>()
    for (let draw = 0; draw < 9_000; draw++) {
      const name = attemptOrder(candidates, noCooling, now, 1, random)[0]!.name
      first.set(name, (first.get(name) ?? 0) + 1)
    }
    for (const name of ["a", "b", "c"]) {
      expect(first.get(name)! / 9_000).toBeGreaterThan(0.31)
      expect(first.get(name)! / 9_000).toBeLessThan(0.36)
    }
  })

  it("skips deployments cooling down, and takes one back once its cooldown has ended", () => {
    const candidates = [candidate("main", 0), candidate("second", 1), candidate("backup", 2)]
    const cooling = new Map([["main", now + 30_000], ["backup", now - 1]])
    expect(names(attemptOrder(candidates, (name) => cooling.get(name), now, 10))).toEqual(["second", "backup"])
    // The instant it ends counts as ended.
    expect(names(attemptOrder(candidates, (name) => cooling.get(name), now + 30_000, 10))).toEqual(["main", "second", "backup"])
  })

  it("when every deployment is cooling, tries only the one whose cooldown ends first", () => {
    const candidates = [candidate("main", 0), candidate("second", 1), candidate("backup", 2)]
    const cooling = new Map([["main", now + 30_000], ["second", now + 5_000], ["backup", now + 60_000]])
    expect(names(attemptOrder(candidates, (name) => cooling.get(name), now, 10))).toEqual(["second"])
  })

  it("gives at most maxAttempts deployments, and at least one", () => {
    const candidates = [candidate("a", 0), candidate("b", 1), candidate("c", 2), candidate("d", 3)]
    expect(names(attemptOrder(candidates, noCooling, now, 3))).toEqual(["a", "b", "c"])
    expect(names(attemptOrder(candidates, noCooling, now, 1))).toEqual(["a"])
    expect(names(attemptOrder(candidates, noCooling, now, 0))).toEqual(["a"])
    // A single deployment is tried even while it cools: there is nothing else.
    expect(names(attemptOrder([candidate("only")], () => now + 60_000, now, 3))).toEqual(["only"])
    expect(attemptOrder([], noCooling, now, 3)).toEqual([])
  })

  it("fails over on 408, 429 and the 5xx statuses, answers the other statuses at once", () => {
    for (const status of [408, 429, 500, 502, 503, 504, 529]) expect(failsOver(status), String(status)).toBe(true)
    for (const status of [200, 201, 301, 400, 401, 403, 404, 409, 413, 422]) expect(failsOver(status), String(status)).toBe(false)
  })
})
