import { Data, Duration, Effect, Schedule } from "effect"
import * as fs from "node:fs"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { type ExportKind } from "../domain/exportLayouts"

export class DownloadFailed extends Data.TaggedError("DownloadFailed")<{ readonly message: string }> {}

interface ExportAnswer {
  readonly success: true
  readonly data: { readonly filePath: string; readonly downloadUrl: string; readonly recordCount: number }
}

const isExportAnswer = (answer: unknown): answer is ExportAnswer =>
  typeof answer === "object" && answer !== null && "data" in answer &&
  typeof (answer as { data: { downloadUrl?: unknown } }).data?.downloadUrl === "string"

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`
const mebibytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** A line on stderr (stdout carries the JSON answer): on a terminal redrawn in place every second; elsewhere (logs) only the final lines. */
const report = (line: string, final = false) =>
  Effect.sync(() => {
    if (process.stderr.isTTY === true) process.stderr.write(`\r${line}\u001b[K${final ? "\n" : ""}`)
    else if (final) process.stderr.write(`${line}\n`)
  })

/** Runs `work`, reporting `line()` every second meanwhile (an export of a million rows takes a minute). */
const whileReporting = <A, E, R>(line: () => string, work: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.zipRight(Effect.forkScoped(Effect.repeat(Effect.suspend(() => report(line())), Schedule.spaced(Duration.seconds(1)))), work)
  )

/** Streams the file behind a download link into a local file, reporting the bytes written. */
const download = (url: string, output: string) => {
  const failed = (reason: string) => new DownloadFailed({ message: `cannot download ${url} to ${output}: ${reason}` })
  return Effect.gen(function*() {
    const started = Date.now()
    const response = yield* Effect.tryPromise({ try: () => fetch(url), catch: (cause) => failed(String(cause)) })
    if (!response.ok || response.body === null) return yield* Effect.fail(failed(`the link answered ${response.status}`))
    const body = Readable.fromWeb(response.body)
    let bytes = 0
    body.on("data", (chunk: Buffer) => {
      bytes += chunk.length
    })
    yield* whileReporting(
      () => `downloading ${mebibytes(bytes)} · ${seconds(started)}`,
      Effect.tryPromise({ try: () => pipeline(body, fs.createWriteStream(output)), catch: (cause) => failed(String(cause)) })
    )
    yield* report(`downloaded ${mebibytes(bytes)} to ${output} in ${seconds(started)}`, true)
  })
}

/**
 * Runs one usage export (the request: the public endpoint with a key, or the operator's admin route),
 * reporting the time it takes and its rows, and returns its answer; with `output`, also downloads the CSV there.
 */
export const runExport = <E, R>(args: {
  readonly kind: ExportKind
  readonly request: Effect.Effect<unknown, E, R>
  readonly output: string | undefined
}) =>
  Effect.gen(function*() {
    const started = Date.now()
    const answer = yield* whileReporting(() => `exporting ${args.kind} · ${seconds(started)}`, args.request)
    if (isExportAnswer(answer)) {
      yield* report(`exported ${answer.data.recordCount.toLocaleString("en")} rows in ${seconds(started)}`, true)
      if (args.output !== undefined) yield* download(answer.data.downloadUrl, args.output)
    }
    return answer
  })
