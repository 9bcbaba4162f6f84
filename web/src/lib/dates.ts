/** Calendar dates as "YYYY-MM-DD" strings, computed in UTC so no local clock or DST shifts a day. */

const dayMs = 86_400_000

/** Today's date in an IANA time zone. */
export const todayIn = (timeZone: string): string =>
  new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date())

export const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * dayMs).toISOString().slice(0, 10)

/** Every date of [from, to). */
export const daysOf = (from: string, to: string): Array<string> => {
  const days: Array<string> = []
  for (let day = from; day < to && days.length < 1000; day = addDays(day, 1)) days.push(day)
  return days
}

export const isDate = (value: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`))

/** UTC midnight of a date in seconds: the x value of a chart point. */
export const dayToSeconds = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000

/** Every IANA time zone name the browser knows, UTC first. */
export const timeZones = (): ReadonlyArray<string> => {
  const supported = (Intl as { supportedValuesOf?: (key: string) => Array<string> }).supportedValuesOf?.("timeZone") ?? []
  return ["UTC", ...supported.filter((zone) => zone !== "UTC")]
}

/** A timestamp for tables, in the browser's locale. */
export const formatTime = (iso: string | null | undefined): string =>
  iso == null ? "—" : new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })

/** A time of day as HH:MM:SS (24-hour), in the browser's time zone: when something happens again soon. */
export const formatClock = (iso: string): string =>
  new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false })
