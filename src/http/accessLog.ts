import { Exit, type FiberId, FiberRef, FiberRefs, LogLevel, type Runtime } from "effect"
import { prettyValue } from "../logger"

/** What the log keeps of one served request. */
export interface AccessEntry {
  readonly requestId: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly durationMs: number
  /** The client address (src/domain/clientAddress.ts), "unknown" when the socket had none. */
  readonly address: string
  /** The serving fiber, as Effect names it in log lines (`#123`). */
  readonly fiberId: string
}

// What JSON.stringify escapes in a string: quotes, backslashes, control characters and (lone) surrogates.
const escapable = /["\\\u0000-\u001f\ud800-\udfff]/

/** A string's JSON text between its quotes: the string itself when nothing in it needs escaping (nearly always). */
const jsonInner = (text: string): string => (escapable.test(text) ? JSON.stringify(text).slice(1, -1) : text)

/** A runtime fiber's name as Effect writes it in log lines (`FiberId.threadName`): `#` and its number. */
export const fiberName = (id: FiberId.Runtime): string => `#${id.id}`

/**
 * The request's log line, in the shape of every other line of the logger LOG_FORMAT chose (src/logger.ts):
 * JSON (message, level, time, annotations, spans, fiber) or the pretty `time LEVEL message key=value …`.
 */
export const accessLogLine = (entry: AccessEntry, at: Date, format: "json" | "pretty" = "json"): string =>
  format === "pretty"
    ? `${at.toISOString()} INFO  request requestId=${prettyValue(entry.requestId)} method=${prettyValue(entry.method)} path=${
      prettyValue(entry.path)
    } status=${entry.status} durationMs=${entry.durationMs} address=${prettyValue(entry.address)}\n`
    // Built as text: the strings escaped as JSON.stringify would, in place (no quoted copy of each made first).
    : `{"message":"request","logLevel":"INFO","timestamp":"${at.toISOString()}","annotations":{"requestId":"${
      jsonInner(entry.requestId)
    }","method":"${jsonInner(entry.method)}","path":"${jsonInner(entry.path)}","status":${entry.status},"durationMs":${entry.durationMs},"address":"${
      jsonInner(entry.address)
    }"},"spans":{},"fiberId":"${jsonInner(entry.fiberId)}"}\n`

/**
 * The one access log of both ways a request is served (the forwarding lane and the HttpApi app): writes
 * the line straight to stdout once the serving has ended, when the runtime's minimum log level lets info
 * through. Going through Effect's logger from inside the fiber (log annotations, a log call) cost about
 * 30 µs a request, most of it FiberRef bookkeeping: a tenth of a forwarded request's CPU.
 */
export const accessLogFor = (runtime: Runtime.Runtime<never>, format: "json" | "pretty" = "json"): AccessLog => {
  const minimum = FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentMinimumLogLevel)
  if (LogLevel.greaterThan(minimum, LogLevel.Info)) return () => {}
  return (entry) => void process.stdout.write(accessLogLine(entry, new Date(), format))
}

export type AccessLog = (entry: AccessEntry) => void

/**
 * The status a request ended with: its answer's, 499 when it was interrupted (the client closed the
 * connection first; nginx's "client closed request"), or 500 when the serving failed.
 */
export const endStatus = <E>(exit: Exit.Exit<number, E>): number =>
  Exit.isSuccess(exit) ? exit.value : Exit.isInterrupted(exit) ? 499 : 500
