import { Inspectable, Logger } from "effect"

/** An Error as JSON can show it (JSON.stringify alone keeps neither its name nor its message). */
const errorToJson = (value: unknown): unknown =>
  value instanceof Error && !("toJSON" in value) ? { ...value, name: value.name, message: value.message } : value

/**
 * One JSON line per log entry, the same lines as Logger.json, written straight to stdout. Logger.json
 * goes through console.log and a cycle-checking serialiser: about 10 µs a line, a tenth of the CPU of
 * a refused request. Entries plain JSON cannot hold (cycles, bigints) use Effect's serialiser.
 */
export const JsonLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.map(Logger.structuredLogger, (entry) => {
    const line = { ...entry, message: Array.isArray(entry.message) ? entry.message.map(errorToJson) : errorToJson(entry.message) }
    let text: string
    try {
      text = JSON.stringify(line)
    } catch {
      text = Inspectable.stringifyCircular(line)
    }
    process.stdout.write(`${text}\n`)
  })
)

/** A value on a pretty line: strings bare unless they hold spaces or quotes, the rest as JSON. */
export const prettyValue = (value: unknown): string => {
  if (typeof value === "string") return /^[^\s"=]*$/.test(value) && value !== "" ? value : JSON.stringify(value)
  if (value instanceof Error) return JSON.stringify(`${value.name}: ${value.message}`)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Inspectable.stringifyCircular(value)
  }
}

/**
 * LOG_FORMAT=pretty: one readable line per entry for a terminal, `time LEVEL message key=value …`;
 * the same entries as the JSON lines, so nothing is lost by choosing it.
 */
export const PrettyLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.map(Logger.structuredLogger, (entry) => {
    const messages = (Array.isArray(entry.message) ? entry.message : [entry.message]).map((part) =>
      typeof part === "string" ? part : prettyValue(part)
    )
    const fields = Object.entries(entry.annotations).map(([key, value]) => `${key}=${prettyValue(value)}`)
    const cause = entry.cause === undefined || entry.cause === "" ? [] : [`cause=${prettyValue(String(entry.cause).split("\n")[0])}`]
    process.stdout.write(`${[entry.timestamp, entry.logLevel.padEnd(5), messages.join(" "), ...fields, ...cause].join(" ")}\n`)
  })
)
