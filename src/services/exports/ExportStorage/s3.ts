import { GetObjectCommand, HeadBucketCommand, S3Client, type S3ClientConfig } from "@aws-sdk/client-s3"
import { Upload } from "@aws-sdk/lib-storage"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { Effect, Option, Redacted, Stream } from "effect"
import { PassThrough } from "node:stream"
import { AppConfig } from "../../../config"
import { isExportFilePath } from "../../../domain/signedUrl"
import { ExportStorageFailure, type ExportStorageShape, InvalidExportPath } from "./contract"

/**
 * Multipart parts of 8 MiB, two in flight: the upload holds at most ~16 MiB of the file in memory,
 * whatever its size (S3's minimum part is 5 MiB).
 */
const PART_BYTES = 8 * 1024 * 1024
const PARTS_IN_FLIGHT = 2

const fileName = (filePath: string) => filePath.slice(filePath.lastIndexOf("/") + 1)

/** The body stream accepts more once it has drained; a failed upload also releases the writer. */
const writePiece = (body: PassThrough, piece: string) =>
  body.write(piece)
    ? Effect.void
    : Effect.async<void>((resume) => {
      const done = () => {
        body.off("drain", done)
        body.off("close", done)
        resume(Effect.void)
      }
      body.once("drain", done)
      body.once("close", done)
    })

/**
 * Export files as objects of an S3 bucket (or any S3-compatible store), keyed by the file path.
 * The CSV streams into a multipart upload as it is produced; an object exists only once the upload
 * completes (a failed one is aborted). Links are presigned GET URLs, valid for the link lifetime.
 */
export const makeS3ExportStorage = (options: {
  readonly client: S3Client
  readonly bucket: string
  readonly linkTtlSeconds: number
}): ExportStorageShape => {
  const { bucket, client } = options
  const checked = (filePath: string) =>
    isExportFilePath(filePath) ? Effect.void : Effect.fail(new InvalidExportPath({ filePath }))

  return {
    backend: "s3",
    // The bucket is there and the credentials may see it (the SDK's retries are cut short by the caller's timeout).
    reachable: Effect.tryPromise({
      try: (signal) => client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: signal }),
      catch: (cause) => new ExportStorageFailure({ operation: "read", filePath: "", cause })
    }).pipe(Effect.asVoid),
    write: (filePath, content) =>
      Effect.gen(function*() {
        yield* checked(filePath)
        const body = new PassThrough({ highWaterMark: 1024 * 1024 })
        const upload = new Upload({
          client,
          params: {
            Bucket: bucket,
            Key: filePath,
            Body: body,
            ContentType: "text/csv; charset=utf-8",
            ContentDisposition: `attachment; filename="${fileName(filePath)}"`
          },
          partSize: PART_BYTES,
          queueSize: PARTS_IN_FLIGHT,
          leavePartsOnError: false
        })
        let bytes = 0
        const feed = Stream.runForEach(content, (piece) => {
          bytes += Buffer.byteLength(piece)
          return writePiece(body, piece)
        }).pipe(Effect.zipRight(Effect.sync(() => body.end())))
        const finish = Effect.tryPromise({
          try: () => upload.done(),
          catch: (cause) => new ExportStorageFailure({ operation: "write", filePath, cause })
        })
        // Both at once: the upload consumes what the feed writes; if either fails, the other stops.
        yield* Effect.all([feed, finish], { concurrency: 2, discard: true }).pipe(
          Effect.onExit((exit) =>
            exit._tag === "Success"
              ? Effect.void
              : Effect.promise(async () => {
                body.destroy()
                await upload.abort().catch(() => undefined)
              })
          )
        )
        return { filePath, bytes }
      }),
    downloadUrl: (filePath, expiresAt) =>
      Effect.zipRight(
        checked(filePath),
        Effect.tryPromise({
          try: (): Promise<string> =>
            getSignedUrl(
              client,
              new GetObjectCommand({
                Bucket: bucket,
                Key: filePath,
                ResponseContentDisposition: `attachment; filename="${fileName(filePath)}"`
              }),
              expiresAt === undefined ? { expiresIn: options.linkTtlSeconds } : presignedUntil(expiresAt, Date.now())
            ),
          catch: (cause) => new ExportStorageFailure({ operation: "link", filePath, cause })
        })
      ),
    // Downloads go straight to the object store.
    read: (filePath) => Effect.as(checked(filePath), Option.none())
  }
}

/**
 * S3 links carry a signing time (whole seconds) and a lifetime: signed now, with what remains until
 * `expiresAt`, so the link ends exactly then.
 */
const presignedUntil = (expiresAt: Date, now: number): { readonly signingDate: Date; readonly expiresIn: number } => {
  const signedAt = Math.floor(now / 1000)
  return { signingDate: new Date(signedAt * 1000), expiresIn: Math.max(1, Math.floor(expiresAt.getTime() / 1000) - signedAt) }
}

/** S3 storage as configured: S3_BUCKET, S3_ENDPOINT, S3_REGION, S3_FORCE_PATH_STYLE, AWS credentials. */
export const s3FromConfig = Effect.gen(function*() {
  const config = yield* AppConfig
  const { s3 } = config
  const credentials = Option.map(s3.credentials, (c): NonNullable<S3ClientConfig["credentials"]> => ({
    accessKeyId: c.accessKeyId,
    secretAccessKey: Redacted.value(c.secretAccessKey),
    ...Option.match(c.sessionToken, { onNone: () => ({}), onSome: (token) => ({ sessionToken: Redacted.value(token) }) })
  }))
  const client = yield* Effect.acquireRelease(
    Effect.sync(() =>
      new S3Client({
        region: s3.region,
        forcePathStyle: s3.forcePathStyle,
        ...Option.match(s3.endpoint, { onNone: () => ({}), onSome: (endpoint) => ({ endpoint }) }),
        // Without explicit keys the SDK's default chain applies (profiles, web identity, instance roles).
        ...Option.match(credentials, { onNone: () => ({}), onSome: (c) => ({ credentials: c }) })
      })
    ),
    (c) => Effect.sync(() => c.destroy())
  )
  return makeS3ExportStorage({
    client,
    // The configuration refuses EXPORT_STORAGE=s3 without S3_BUCKET.
    bucket: Option.getOrElse(s3.bucket, () => ""),
    linkTtlSeconds: config.exportLinkTtlSeconds
  })
})
