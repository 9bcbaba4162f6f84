import { Exit, FiberRef, FiberRefs, LogLevel, type Runtime } from "effect"

/** What the log keeps of one served request. */
export interface AccessEntry {
  readonly requestId: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly durationMs: number
  /** The serving fiber, as Effect names it in log lines (`#123`). */
  readonly fiberId: string
}

/**
 * The request's log line, in the shape of every other line of the JSON logger (src/logger.ts):
 * message, level, time, annotations, spans, fiber.
 */
export const accessLogLine = (entry: AccessEntry, at: Date): string =>
  // Built as text: the only values that may need escaping are the id and the path.
  `{"message":"request","logLevel":"INFO","timestamp":"${at.toISOString()}","annotations":{"requestId":${
    JSON.stringify(entry.requestId)
  },"method":${JSON.stringify(entry.method)},"path":${JSON.stringify(entry.path)},"status":${entry.status},"durationMs":${entry.durationMs}},"spans":{},"fiberId":${
    JSON.stringify(entry.fiberId)
  }}\n`

/**
 * Writes access lines straight to stdout, once the serving fiber has ended, when the runtime's
 * minimum log level lets info through. Going through Effect's logger from inside the fiber (log
 * annotations, a log call) cost about 30 µs a request, most of it FiberRef bookkeeping: a tenth of
 * a forwarded request's CPU.
 */
export const accessLogFor = (runtime: Runtime.Runtime<never>): ((entry: AccessEntry) => void) => {
  const minimum = FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentMinimumLogLevel)
  if (LogLevel.greaterThan(minimum, LogLevel.Info)) return () => {}
  return (entry) => void process.stdout.write(accessLogLine(entry, new Date()))
}

/**
 * The status a request ended with: its answer's, 499 when it was interrupted (the client closed the
 * connection first; nginx's "client closed request"), or 500 when the serving failed.
 */
export const endStatus = <E>(exit: Exit.Exit<number, E>): number =>
  Exit.isSuccess(exit) ? exit.value : Exit.isInterrupted(exit) ? 499 : 500
