import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { type DatePointInput, resolveDatePoint, resolveDateRange } from "../../src/domain/datePoint"

const resolveFrom = (date: string, timezone: string) => resolveDatePoint({ date, timezone }, "from")

const right = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) expect.fail(`expected success, got ${JSON.stringify(result.left)}`)
  return result.right
}

const left = <A, E>(result: Either.Either<A, E>): E => {
  if (Either.isRight(result)) expect.fail(`expected failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("resolveDatePoint", () => {
  it("reads a UTC wall time", () => {
    const point = right(resolveFrom("2026-01-05T00:00:00", "UTC"))
    expect(point.instant.toISOString()).toBe("2026-01-05T00:00:00.000Z")
    expect(point.iso).toBe("2026-01-05T00:00:00+00:00")
    expect(point.zone).toBe("UTC")
    expect(point.fileDate).toBe("20260105")
  })

  it("removes a trailing Z so the zone is applied once", () => {
    const point = right(resolveFrom("2026-01-05T00:00:00Z", "Europe/Berlin"))
    expect(point.instant.toISOString()).toBe("2026-01-04T23:00:00.000Z")
    expect(point.iso).toBe("2026-01-05T00:00:00+01:00")
    expect(point.fileDate).toBe("20260105")
  })

  it("uses +01:00 in winter and +02:00 in summer for Europe/Berlin", () => {
    expect(right(resolveFrom("2026-01-15T12:00", "Europe/Berlin")).iso).toBe("2026-01-15T12:00:00+01:00")
    const summer = right(resolveFrom("2026-07-15T12:00", "Europe/Berlin"))
    expect(summer.iso).toBe("2026-07-15T12:00:00+02:00")
    expect(summer.instant.toISOString()).toBe("2026-07-15T10:00:00.000Z")
  })

  it("reads a plain date as local midnight", () => {
    const point = right(resolveFrom("2026-07-01", "America/New_York"))
    expect(point.instant.toISOString()).toBe("2026-07-01T04:00:00.000Z")
    expect(point.iso).toBe("2026-07-01T00:00:00-04:00")
  })

  it("keeps milliseconds and cuts further fraction digits", () => {
    const point = right(resolveFrom("2026-01-05T10:15:30.250999", "Asia/Kolkata"))
    expect(point.instant.toISOString()).toBe("2026-01-05T04:45:30.250Z")
    expect(point.iso).toBe("2026-01-05T10:15:30.250+05:30")
  })

  it("moves a wall time in the spring-forward gap forward by the gap (Berlin 02:30 → 03:30+02:00)", () => {
    const point = right(resolveFrom("2026-03-29T02:30:00", "Europe/Berlin"))
    expect(point.instant.toISOString()).toBe("2026-03-29T01:30:00.000Z")
    expect(point.iso).toBe("2026-03-29T03:30:00+02:00")
  })

  it("takes the earlier instant of an ambiguous wall time in the fall-back overlap", () => {
    const berlin = right(resolveFrom("2026-10-25T02:30:00", "Europe/Berlin"))
    expect(berlin.instant.toISOString()).toBe("2026-10-25T00:30:00.000Z")
    expect(berlin.iso).toBe("2026-10-25T02:30:00+02:00")
    const newYork = right(resolveFrom("2026-11-01T01:30", "America/New_York"))
    expect(newYork.instant.toISOString()).toBe("2026-11-01T05:30:00.000Z")
    expect(newYork.iso).toBe("2026-11-01T01:30:00-04:00")
  })

  it("leaves wall times right after the overlap unambiguous", () => {
    const point = right(resolveFrom("2026-10-25T03:00:00", "Europe/Berlin"))
    expect(point.iso).toBe("2026-10-25T03:00:00+01:00")
  })

  it("normalises the letter case of a zone and keeps aliases as sent", () => {
    expect(right(resolveFrom("2026-01-05", "europe/berlin")).zone).toBe("Europe/Berlin")
    expect(right(resolveFrom("2026-01-05", "utc")).zone).toBe("UTC")
    expect(right(resolveFrom("2026-01-05", "US/Eastern")).zone).toBe("US/Eastern")
  })

  it("replaces the legacy zones PostgreSQL reads as fixed abbreviations by their link targets", () => {
    expect(right(resolveFrom("2026-07-01", "CET")).zone).toBe("Europe/Brussels")
    expect(right(resolveFrom("2026-07-01", "cet")).zone).toBe("Europe/Brussels")
    expect(right(resolveFrom("2026-07-01", "MET")).zone).toBe("Europe/Brussels")
    expect(right(resolveFrom("2026-07-01", "EET")).zone).toBe("Europe/Athens")
    expect(right(resolveFrom("2026-07-01", "WET")).zone).toBe("Europe/Lisbon")
    // Summer time, as the names mean in the tz database.
    expect(right(resolveFrom("2026-07-01", "CET")).iso).toBe("2026-07-01T00:00:00+02:00")
    expect(right(resolveFrom("2026-01-05", "CET")).iso).toBe("2026-01-05T00:00:00+01:00")
    expect(right(resolveFrom("2026-07-01", "WET")).iso).toBe("2026-07-01T00:00:00+01:00")
    // Fixed on both sides: kept.
    expect(right(resolveFrom("2026-07-01", "EST")).zone).toBe("EST")
  })

  it("rejects an unknown zone naming from.timezone", () => {
    const error = left(resolveFrom("2026-01-05T00:00:00", "Mars/Olympus_Mons"))
    expect(error._tag).toBe("InvalidDatePoint")
    expect(error.field).toBe("from.timezone")
    expect(error.message).toContain("Mars/Olympus_Mons")
  })

  it("rejects raw offsets as a zone", () => {
    expect(left(resolveFrom("2026-01-05", "+01:00")).field).toBe("from.timezone")
    expect(left(resolveFrom("2026-01-05", "")).field).toBe("from.timezone")
  })

  it.each(["yesterday", "2026-13-01", "2026-02-30", "2026-01-05T25:00", "2026-01-05 10:00", "2026-1-5", "2026-01-05TZ"])(
    "rejects the malformed date %s naming from.date",
    (date) => {
      const error = left(resolveFrom(date, "UTC"))
      expect(error.field).toBe("from.date")
    }
  )

  it("rejects an explicit offset other than Z, naming the side's date", () => {
    const error = left(resolveDatePoint({ date: "2026-01-05T10:00:00+02:00", timezone: "Europe/Berlin" }, "to"))
    expect(error.field).toBe("to.date")
    expect(error.message).toContain("offset")
  })
})

describe("resolveDateRange", () => {
  const berlin = (date: string): DatePointInput => ({ date, timezone: "Europe/Berlin" })

  it("resolves both points and reports in from's zone", () => {
    const range = right(resolveDateRange(berlin("2026-01-05"), { date: "2026-07-01T00:00:00Z", timezone: "UTC" }))
    expect(range.zone).toBe("Europe/Berlin")
    expect(range.from.iso).toBe("2026-01-05T00:00:00+01:00")
    expect(range.to.iso).toBe("2026-07-01T00:00:00+00:00")
  })

  it("rejects from after to naming to", () => {
    const error = left(resolveDateRange(berlin("2026-02-01"), berlin("2026-01-01")))
    expect(error.field).toBe("to")
  })

  it("rejects an empty range naming to", () => {
    expect(left(resolveDateRange(berlin("2026-02-01"), berlin("2026-02-01T00:00:00Z"))).field).toBe("to")
  })

  it("reports the first invalid field", () => {
    expect(left(resolveDateRange(berlin("nope"), { date: "2026-01-01", timezone: "Nowhere" })).field).toBe("from.date")
    expect(left(resolveDateRange(berlin("2026-01-01"), { date: "2026-01-02", timezone: "Nowhere" })).field).toBe(
      "to.timezone"
    )
  })
})
