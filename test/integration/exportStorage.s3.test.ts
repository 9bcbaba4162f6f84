import { S3Client } from "@aws-sdk/client-s3"
import { describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ExportStorage } from "../../src/services/exports/ExportStorage/index"
import { makeS3ExportStorage } from "../../src/services/exports/ExportStorage/s3"
import { exportStorageContract } from "../contracts/exportStorage"
import { useS3Server } from "../support/s3Server"

/** The S3 backing over a local S3-compatible server (s3rver), built once the server has started. */
describe("ExportStorage.s3", () => {
  const s3 = useS3Server("exports")
  const S3Storage = Layer.scoped(
    ExportStorage,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() =>
          new S3Client({
            region: s3.env.S3_REGION!,
            endpoint: s3.env.S3_ENDPOINT!,
            forcePathStyle: true,
            credentials: { accessKeyId: s3.env.AWS_ACCESS_KEY_ID!, secretAccessKey: s3.env.AWS_SECRET_ACCESS_KEY! }
          })
        ),
        (client) => Effect.sync(() => client.destroy())
      ),
      (client) => makeS3ExportStorage({ client, bucket: s3.env.S3_BUCKET!, linkTtlSeconds: 600 })
    )
  )
  // The contract of test/contracts/exportStorage.ts, as on memory and local (test/services/exports/ExportStorage.test.ts).
  layer(S3Storage, { excludeTestServices: true })("keeps the contract", exportStorageContract)
})
