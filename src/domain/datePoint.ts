/**
 * Date points of the usage export requests: `{ date, timezone }` turned into UTC instants.
 *
 * Rules (spec "Date point", issue #3):
 * - `date` is a local wall time in the IANA zone `timezone`. One trailing `Z` (or `z`) is removed first,
 *   so a client that sends `2026-01-05T00:00:00Z` with `Europe/Berlin` means Berlin midnight.
 * - Accepted shapes: `YYYY-MM-DD` (local midnight), `YYYY-MM-DDTHH:mm`, `YYYY-MM-DDTHH:mm:ss`,
 *   `YYYY-MM-DDTHH:mm:ss.fff` (1–9 fraction digits; kept to the millisecond, further digits are cut).
 * - Any other explicit offset (`+02:00`, `-0500`, …) is REJECTED rather than ignored: the zone comes from
 *   `timezone` only, and silently dropping an offset would shift the range without anyone noticing.
 * - `timezone` must be an IANA identifier known to the runtime (`UTC`, `Europe/Berlin`, `Etc/GMT+1`).
 *   Raw offsets (`+01:00`, `UTC+1`) are refused: PostgreSQL reads such strings with POSIX (inverted) signs.
 *   The legacy zones `CET`, `MET`, `EET`, `WET` are replaced by their IANA link targets: PostgreSQL reads
 *   those names as fixed-offset abbreviations (CET = +01:00 all year) before zone names, Node as zones
 *   with summer time. A reporting zone PostgreSQL does not know at all is refused when the export runs
 *   (see `ExportService`), naming `from.timezone`; `to.timezone` never reaches SQL.
 * - The range is half-open: an event at instant t is exported when `from <= t < to`; `from` must be
 *   strictly before `to` (an empty range is refused, naming `to`).
 * - The reporting zone of an export (its local days, `AT TIME ZONE` in SQL) is `from.timezone`;
 *   each point is still resolved and rendered in its own zone.
 *
 * Daylight-saving transitions are resolved like Temporal's `disambiguation: "compatible"`:
 * - a wall time inside a spring-forward gap is moved forward by the length of the gap
 *   (Berlin 2026-03-29T02:30 → 03:30+02:00);
 * - an ambiguous wall time inside a fall-back overlap takes the EARLIER of its two instants
 *   (Berlin 2026-10-25T02:30 → 02:30+02:00, i.e. 00:30Z).
 * This is computed here rather than left to luxon, whose choice in an overlap depends on the current date.
 */
import { Either, Schema } from "effect"
import { DateTime, IANAZone } from "luxon"

export class InvalidDatePoint extends Schema.TaggedError<InvalidDatePoint>()("InvalidDatePoint", {
  /** The offending request field: `from.date`, `from.timezone`, `to.date`, `to.timezone` or `to`. */
  field: Schema.String,
  message: Schema.String
}) {}

/** A date point as sent in the request body. */
export interface DatePointInput {
  readonly date: string
  readonly timezone: string
}

export type DatePointSide = "from" | "to"

export interface ResolvedDatePoint {
  /** The UTC instant of the wall time. */
  readonly instant: Date
  /**
   * The IANA zone (case-normalised, aliases kept as sent except the legacy zones PostgreSQL reads as
   * abbreviations, see `resolveZone`), usable in SQL `AT TIME ZONE`. Never echoed to the client.
   */
  readonly zone: string
  /** ISO 8601 with the zone's offset, e.g. `2026-01-05T00:00:00+01:00` (`.SSS` only when non-zero). */
  readonly iso: string
  /** The local calendar date for file names, `yyyyMMdd`, e.g. `20260105`. */
  readonly fileDate: string
}

export interface ResolvedDateRange {
  readonly from: ResolvedDatePoint
  readonly to: ResolvedDatePoint
  /** The reporting zone: local days are cut at midnight of this zone (= `from.zone`). */
  readonly zone: string
}

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

const WALL_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/
const EXPLICIT_OFFSET = /^\d{4}-\d{2}-\d{2}T[\d:.]+(?:[+-]\d{2}(?::?\d{2})?)$/
// Starts with a letter, so raw offsets such as "+01:00" never reach PostgreSQL.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/

const invalid = (field: string, message: string) => Either.left(new InvalidDatePoint({ field, message }))

/**
 * Zones that PostgreSQL's default `timezone_abbreviations` also lists as fixed-offset abbreviations,
 * which `AT TIME ZONE` tries first, mapped to their tz database link targets (tzdata 2024b), which both
 * sides read with summer time. Found by comparing Node 20's zones with PostgreSQL 18's offsets in
 * January and July; EST, MST and HST are abbreviations too, but fixed on both sides.
 */
const ABBREVIATION_ZONES: Readonly<Record<string, string>> = {
  CET: "Europe/Brussels",
  MET: "Europe/Brussels",
  EET: "Europe/Athens",
  WET: "Europe/Lisbon"
}

/**
 * Validates an IANA zone name and normalises its letter case (`europe/berlin` → `Europe/Berlin`);
 * `CET`, `MET`, `EET` and `WET` become the zone both Node and PostgreSQL read the same way.
 */
export const resolveZone = (timezone: string, field: string): Either.Either<string, InvalidDatePoint> => {
  if (!ZONE_NAME.test(timezone) || !IANAZone.isValidZone(timezone)) {
    return invalid(field, `unknown time zone "${timezone}": use an IANA identifier such as UTC or Europe/Berlin`)
  }
  const linkTarget = ABBREVIATION_ZONES[timezone.toUpperCase()]
  if (linkTarget !== undefined) return Either.right(linkTarget)
  // isValidZone succeeded, so Intl accepts the name. Use its canonical spelling only when it differs in
  // case alone: other links are kept as sent, their rules may differ between tz database versions.
  const canonical = new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone
  return Either.right(canonical.toLowerCase() === timezone.toLowerCase() ? canonical : timezone)
}

interface WallTime {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
  readonly millisecond: number
}

const parseWallTime = (text: string): WallTime | undefined => {
  const match = WALL_TIME.exec(text)
  if (match === null) return undefined
  const [, y, mo, d, h, mi, s, fraction] = match
  const wall: WallTime = {
    year: Number(y),
    month: Number(mo),
    day: Number(d),
    hour: Number(h ?? 0),
    minute: Number(mi ?? 0),
    second: Number(s ?? 0),
    millisecond: fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, "0"))
  }
  if (wall.year < 1 || wall.hour > 23 || wall.minute > 59 || wall.second > 59) return undefined
  return wall
}

/** The wall time read as if it were UTC; undefined when it is not a calendar date (e.g. 2026-02-30). */
const wallTimeAsUtcMillis = (wall: WallTime): number | undefined => {
  const date = new Date(0)
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day)
  date.setUTCHours(wall.hour, wall.minute, wall.second, wall.millisecond)
  const sameDay =
    date.getUTCFullYear() === wall.year && date.getUTCMonth() === wall.month - 1 && date.getUTCDate() === wall.day
  return sameDay ? date.getTime() : undefined
}

/**
 * The instant of a wall time in a zone, "compatible" disambiguation: gap → shifted forward by the gap,
 * overlap → earlier instant. Offsets around the wall time are sampled one day before and after, as
 * Temporal does; zone offsets never change twice within a day.
 */
export const wallTimeToInstant = (localMillis: number, zone: IANAZone): number => {
  const offsetBefore = zone.offset(localMillis - DAY_MS)
  const offsetAfter = zone.offset(localMillis + DAY_MS)
  const instantWith = (offsetMinutes: number) => localMillis - offsetMinutes * MINUTE_MS
  const fits = (offsetMinutes: number) => zone.offset(instantWith(offsetMinutes)) === offsetMinutes
  const beforeFits = fits(offsetBefore)
  const afterFits = fits(offsetAfter)
  if (beforeFits && afterFits) return Math.min(instantWith(offsetBefore), instantWith(offsetAfter))
  if (beforeFits) return instantWith(offsetBefore)
  if (afterFits) return instantWith(offsetAfter)
  // In a gap: the offset in force before the transition moves the wall time forward by the gap length.
  return instantWith(offsetBefore)
}

/** ISO 8601 in the zone with its offset: `2026-01-05T00:00:00+01:00`, milliseconds only when non-zero. */
export const formatInZone = (instant: Date, zone: string): string => {
  const local = DateTime.fromJSDate(instant, { zone })
  return local.toFormat(local.millisecond === 0 ? "yyyy-MM-dd'T'HH:mm:ssZZ" : "yyyy-MM-dd'T'HH:mm:ss.SSSZZ")
}

/** The local calendar date of an instant in a zone, `yyyyMMdd`, as used in export file names. */
export const fileDateInZone = (instant: Date, zone: string): string =>
  DateTime.fromJSDate(instant, { zone }).toFormat("yyyyMMdd")

/** Resolves one date point; errors name `<side>.date` or `<side>.timezone`. */
export const resolveDatePoint = (
  input: DatePointInput,
  side: DatePointSide
): Either.Either<ResolvedDatePoint, InvalidDatePoint> =>
  Either.flatMap(resolveZone(input.timezone, `${side}.timezone`), (zone) => {
    const field = `${side}.date`
    const text = input.date.endsWith("Z") || input.date.endsWith("z") ? input.date.slice(0, -1) : input.date
    if (EXPLICIT_OFFSET.test(text)) {
      return invalid(
        field,
        `"${input.date}" carries a UTC offset; send the local wall time without offset (a trailing Z is allowed) and the zone in ${side}.timezone`
      )
    }
    const wall = parseWallTime(text)
    const localMillis = wall === undefined ? undefined : wallTimeAsUtcMillis(wall)
    if (localMillis === undefined) {
      return invalid(
        field,
        `"${input.date}" is not an ISO 8601 date or date-time (YYYY-MM-DD or YYYY-MM-DDTHH:mm[:ss[.fff]])`
      )
    }
    const instant = new Date(wallTimeToInstant(localMillis, IANAZone.create(zone)))
    return Either.right({
      instant,
      zone,
      iso: formatInZone(instant, zone),
      fileDate: fileDateInZone(instant, zone)
    })
  })

/** Resolves `from` and `to`; `from` must be strictly before `to` (error field `to`). */
export const resolveDateRange = (
  from: DatePointInput,
  to: DatePointInput
): Either.Either<ResolvedDateRange, InvalidDatePoint> =>
  Either.flatMap(resolveDatePoint(from, "from"), (resolvedFrom) =>
    Either.flatMap(resolveDatePoint(to, "to"), (resolvedTo) =>
      resolvedFrom.instant.getTime() < resolvedTo.instant.getTime()
        ? Either.right({ from: resolvedFrom, to: resolvedTo, zone: resolvedFrom.zone })
        : invalid(
            "to",
            `to (${resolvedTo.iso}) must be after from (${resolvedFrom.iso}); the range is half-open [from, to)`
          )
    )
  )
