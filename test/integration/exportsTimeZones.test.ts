import { beforeAll, describe, expect, it } from "vitest"
import { createKey, createWorkspace, useApp } from "../support/app"
import { datePoint, ingest, message, runExport } from "../support/usage"

const berlin = (from: string, to: string) => ({ from: datePoint(from, "Europe/Berlin"), to: datePoint(to, "Europe/Berlin") })
const periodsOf = (lines: ReadonlyArray<string>) => lines.slice(1).map((line) => line.split(",").slice(0, 2).join(","))

describe("usage exports in a time zone", () => {
  const app = useApp({}, { stores: "postgres" })
  let key = ""

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    key = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    await ingest(app.current, workspace.id, [
      // Winter: 23:30Z on the 5th is 00:30 on the 6th in Berlin.
      message("w1", "2026-01-05T22:30:00Z"),
      message("w2", "2026-01-05T23:30:00Z"),
      // Summer.
      message("s1", "2026-07-01T10:00:00Z"),
      // Spring forward, 2026-03-29: 00:30+01:00 and 03:30+02:00 are the same local day.
      message("d1", "2026-03-28T23:30:00Z"),
      message("d2", "2026-03-29T01:30:00Z"),
      // Fall back, 2026-10-25: 02:30+02:00 and 02:30+01:00 (the hour that happens twice).
      message("f1", "2026-10-25T00:30:00Z"),
      message("f2", "2026-10-25T01:30:00Z")
    ])
  })

  it("reads dates as Berlin wall time, with +01:00 in winter and +02:00 in summer", async () => {
    const winter = await runExport(app.current, key, "users", berlin("2026-01-05T00:00:00", "2026-01-07T00:00:00"))
    expect(winter.body.data.dateRange).toEqual({ from: "2026-01-05T00:00:00+01:00", to: "2026-01-07T00:00:00+01:00" })
    expect(periodsOf(winter.lines!)).toEqual([
      "2026-01-05T00:00:00+01:00,2026-01-06T00:00:00+01:00",
      "2026-01-06T00:00:00+01:00,2026-01-07T00:00:00+01:00"
    ])
    // first_active_hour is local: 23 on the 5th, 0 on the 6th.
    expect(winter.lines![1]!.split(",")[12]).toBe("23")
    expect(winter.lines![2]!.split(",")[12]).toBe("0")

    const summer = await runExport(app.current, key, "users", berlin("2026-07-01", "2026-07-02"))
    expect(summer.body.data.dateRange).toEqual({ from: "2026-07-01T00:00:00+02:00", to: "2026-07-02T00:00:00+02:00" })
    expect(periodsOf(summer.lines!)).toEqual(["2026-07-01T00:00:00+02:00,2026-07-02T00:00:00+02:00"])
    expect(summer.lines![1]!.split(",")[12]).toBe("12")
  })

  it("removes a trailing Z instead of reading the date as UTC", async () => {
    const withZ = await runExport(app.current, key, "users", berlin("2026-01-06T00:00:00Z", "2026-01-07T00:00:00Z"))
    expect(withZ.body.data.dateRange.from).toBe("2026-01-06T00:00:00+01:00")
    // Only w2 (00:30 local on the 6th); read as UTC, the range would have held w1 instead.
    expect(withZ.body.data.recordCount).toBe(1)
    expect(withZ.lines![1]!.split(",")[12]).toBe("0")
    expect(withZ.body.data.filePath).toContain("-20260106-20260107-")
  })

  it("cuts days at local midnight across DST changes: a 23-hour and a 25-hour day", async () => {
    const spring = await runExport(app.current, key, "users", berlin("2026-03-28", "2026-03-31"))
    expect(periodsOf(spring.lines!)).toEqual(["2026-03-29T00:00:00+01:00,2026-03-30T00:00:00+02:00"])
    // Both messages on the one local day: messages 2, active hours 0 and 3.
    expect(spring.lines![1]!.split(",").slice(5, 6)).toEqual(["2"])
    expect(spring.lines![1]!.split(",").slice(11, 14)).toEqual(["2", "0", "3"])

    const autumn = await runExport(app.current, key, "users", berlin("2026-10-25", "2026-10-26"))
    expect(autumn.body.data.dateRange).toEqual({ from: "2026-10-25T00:00:00+02:00", to: "2026-10-26T00:00:00+01:00" })
    expect(periodsOf(autumn.lines!)).toEqual(["2026-10-25T00:00:00+02:00,2026-10-26T00:00:00+01:00"])
    // Two messages at local 02:30, one hour apart: the same clock hour.
    expect(autumn.lines![1]!.split(",").slice(11, 14)).toEqual(["1", "2", "2"])
  })

  it("resolves wall times in a DST gap forward and ambiguous ones to the earlier instant", async () => {
    // 02:30 does not exist on 2026-03-29: it becomes 03:30+02:00, after d2 (03:30 local is d2 exactly).
    const gap = await runExport(app.current, key, "users", berlin("2026-03-29T02:30:00", "2026-03-30T00:00:00"))
    expect(gap.body.data.dateRange.from).toBe("2026-03-29T03:30:00+02:00")
    expect(periodsOf(gap.lines!)).toEqual(["2026-03-29T03:30:00+02:00,2026-03-30T00:00:00+02:00"])
    expect(gap.body.data.recordCount).toBe(1)
    expect(gap.lines![1]!.split(",")[5]).toBe("1")

    // 02:30 happens twice on 2026-10-25: the earlier one (+02:00) is taken, so f1 is inside.
    const overlap = await runExport(app.current, key, "users", berlin("2026-10-25T02:30:00", "2026-10-25T12:00:00"))
    expect(overlap.body.data.dateRange.from).toBe("2026-10-25T02:30:00+02:00")
    expect(overlap.lines![1]!.split(",")[5]).toBe("2")
  })

  it("reads CET with summer time in SQL too, as Node does (PostgreSQL's CET abbreviation is +01:00 all year)", async () => {
    const workspace = await createWorkspace(app.current, "CET")
    const cetKey = (await createKey(app.current, workspace.id, ["USAGE_EXPORT_API"])).key
    // 00:30 on 1 July in CET summer time; 23:30 on 30 June read as fixed +01:00.
    await ingest(app.current, workspace.id, [message("c1", "2026-06-30T22:30:00Z"), message("c2", "2026-07-01T10:00:00Z")])
    const cet = await runExport(app.current, cetKey, "users", {
      from: datePoint("2026-07-01", "CET"),
      to: datePoint("2026-07-02", "CET")
    })
    expect(cet.body.data.dateRange).toEqual({ from: "2026-07-01T00:00:00+02:00", to: "2026-07-02T00:00:00+02:00" })
    expect(periodsOf(cet.lines!)).toEqual(["2026-07-01T00:00:00+02:00,2026-07-02T00:00:00+02:00"])
    // Both messages on the one day, active hours 0 and 12.
    expect(cet.lines![1]!.split(",").slice(5, 6)).toEqual(["2"])
    expect(cet.lines![1]!.split(",").slice(11, 14)).toEqual(["2", "0", "12"])
  })

  it("cuts days in from.timezone and shows to in its own zone", async () => {
    const mixed = await runExport(app.current, key, "users", {
      from: datePoint("2026-01-05T00:00:00", "UTC"),
      to: datePoint("2026-01-06T18:00:00", "America/New_York")
    })
    expect(mixed.body.data.dateRange).toEqual({ from: "2026-01-05T00:00:00+00:00", to: "2026-01-06T18:00:00-05:00" })
    // UTC days: w1 and w2 both fall on the 5th.
    expect(periodsOf(mixed.lines!)).toEqual(["2026-01-05T00:00:00+00:00,2026-01-06T00:00:00+00:00"])
    expect(mixed.lines![1]!.split(",")[5]).toBe("2")
  })
})
