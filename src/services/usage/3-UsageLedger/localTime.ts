import { IANAZone } from "luxon"

const DAY_MS = 86_400_000
const MINUTE_MS = 60_000

/**
 * The instant of a local wall time (given as if it were UTC) as PostgreSQL's `timestamp AT TIME ZONE`
 * resolves it: in a gap, the offset before the transition; in an overlap, the one after it (the later
 * instant). Not datePoint's rule for request bodies, which takes the earlier instant of an overlap.
 */
export const pgWallTimeToInstant = (localMillis: number, zone: string): number => {
  const iana = IANAZone.create(zone)
  const offsetBefore = iana.offset(localMillis - DAY_MS)
  const offsetAfter = iana.offset(localMillis + DAY_MS)
  const instantWith = (offsetMinutes: number) => localMillis - offsetMinutes * MINUTE_MS
  const fits = (offsetMinutes: number) => iana.offset(instantWith(offsetMinutes)) === offsetMinutes
  return fits(offsetAfter) ? instantWith(offsetAfter) : instantWith(offsetBefore)
}

/** The local midnight starting a date `YYYY-MM-DD` in a zone, as PostgreSQL resolves it. */
export const pgLocalMidnight = (date: string, zone: string): number => pgWallTimeToInstant(Date.parse(`${date}T00:00:00Z`), zone)
