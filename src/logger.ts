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
