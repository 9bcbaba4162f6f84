import { Effect, Layer } from "effect"
import { AppConfig } from "../../config"
import * as local from "./local"

/**
 * The storage EXPORT_STORAGE names. The S3 backend is imported only when chosen: the SDK is large
 * and a local deployment need not load it.
 */
export const ExportStorageLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { exportStorage } = yield* AppConfig
    if (exportStorage === "local") return local.layer
    const s3 = yield* Effect.promise(() => import("./s3"))
    return s3.layer
  })
)
