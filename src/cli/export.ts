import { Data, Effect } from "effect"
import * as fs from "node:fs"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { type ExportKind } from "../domain/exportLayouts"
import { postJson } from "./adminCall"

export class DownloadFailed extends Data.TaggedError("DownloadFailed")<{ readonly message: string }> {}

interface ExportAnswer {
  readonly success: true
  readonly data: { readonly filePath: string; readonly downloadUrl: string; readonly recordCount: number }
}

const isExportAnswer = (answer: unknown): answer is ExportAnswer =>
  typeof answer === "object" && answer !== null && "data" in answer &&
  typeof (answer as { data: { downloadUrl?: unknown } }).data?.downloadUrl === "string"

/** Streams the file behind a download link into a local file. */
const download = (url: string, output: string) => {
  const failed = (reason: string) => new DownloadFailed({ message: `cannot download ${url} to ${output}: ${reason}` })
  return Effect.gen(function*() {
    const response = yield* Effect.tryPromise({ try: () => fetch(url), catch: (cause) => failed(String(cause)) })
    if (!response.ok || response.body === null) return yield* Effect.fail(failed(`the link answered ${response.status}`))
    const body = response.body
    yield* Effect.tryPromise({
      try: () => pipeline(Readable.fromWeb(body), fs.createWriteStream(output)),
      catch: (cause) => failed(String(cause))
    })
  })
}

/**
 * Runs one usage export through the public endpoint with an API key (USAGE_EXPORT_API) and returns
 * its answer; with `output`, also downloads the CSV there.
 */
export const runExport = (args: {
  readonly baseUrl: string
  readonly apiKey: string
  readonly kind: ExportKind
  readonly from: { readonly date: string; readonly timezone: string }
  readonly to: { readonly date: string; readonly timezone: string }
  readonly output: string | undefined
}) =>
  Effect.gen(function*() {
    const answer = yield* postJson(`${args.baseUrl}/export/${args.kind}`, args.apiKey, JSON.stringify({ from: args.from, to: args.to }))
    if (args.output !== undefined && isExportAnswer(answer)) yield* download(answer.data.downloadUrl, args.output)
    return answer
  })
