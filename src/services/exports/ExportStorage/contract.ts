import { Data, type Effect, type Option, type Stream } from "effect"

/** Where export files go, and how a caller gets them back. */
export type ExportStorageBackend = "local" | "s3" | "memory"

export interface StoredExport {
  readonly filePath: string
  readonly bytes: number
}

/** A stored file being read back, for the signed download route. */
export interface ExportFileContent {
  readonly bytes: number
  readonly stream: Stream.Stream<Uint8Array, ExportStorageFailure>
}

/** The storage failed (disk, network, object store). Not the caller's fault: a 5xx. */
export class ExportStorageFailure extends Data.TaggedError("ExportStorageFailure")<{
  readonly operation: "write" | "read" | "link"
  readonly filePath: string
  readonly cause: unknown
}> {}

/** A path that is not an export file path was given; nothing is written or read. */
export class InvalidExportPath extends Data.TaggedError("InvalidExportPath")<{ readonly filePath: string }> {}

/** What every backing provides (the ExportStorage Tag's shape). */
export interface ExportStorageShape {
  readonly backend: ExportStorageBackend
  /**
   * Writes the content (CSV text, one string per piece) to `filePath` as it streams, without holding
   * it in memory. The file appears at `filePath` only once it is complete: a failed or interrupted
   * write leaves nothing there.
   */
  readonly write: <E, R>(
    filePath: string,
    content: Stream.Stream<string, E, R>
  ) => Effect.Effect<StoredExport, E | ExportStorageFailure | InvalidExportPath, R>
  /**
   * A signed link that downloads the file until `expiresAt`, by default the configured expiry from
   * now (EXPORT_LINK_TTL_SECONDS). A link signed again for a listed export keeps the first one's expiry.
   */
  readonly downloadUrl: (filePath: string, expiresAt?: Date) => Effect.Effect<string, ExportStorageFailure | InvalidExportPath>
  /**
   * The file's bytes, for `GET /downloads/...`. None when there is no such file, or when the backend
   * serves downloads itself (S3's presigned URLs never reach this service).
   */
  readonly read: (filePath: string) => Effect.Effect<Option.Option<ExportFileContent>, ExportStorageFailure | InvalidExportPath>
  /** Whether a remote store answers, for /readyz; absent where there is nothing remote to ask (local disk, memory). */
  readonly reachable?: Effect.Effect<void, ExportStorageFailure>
}
