import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../../config"
import type { ExportStorageShape } from "./contract"
import { localFromConfig } from "./local"
import { makeMemoryExportStorage } from "./memory"

export * from "./contract"

export class ExportStorage extends Context.Tag("ExportStorage")<ExportStorage, ExportStorageShape>() {
  /** Files under DATA_DIR/exports, links to this service's signed download route. */
  static readonly local = Layer.scoped(ExportStorage, localFromConfig)

  /** An S3 bucket (S3_*): imported only when used, the SDK is large and a local deployment need not load it. */
  static readonly s3 = Layer.scoped(
    ExportStorage,
    Effect.flatMap(Effect.promise(() => import("./s3")), (s3) => s3.s3FromConfig)
  )

  /** For tests: files kept in memory, links of the form `memory://<filePath>`. */
  static readonly memory = Layer.effect(ExportStorage, makeMemoryExportStorage)

  /** The storage EXPORT_STORAGE names. */
  static readonly fromConfig = Layer.unwrapEffect(
    Effect.map(AppConfig, ({ exportStorage }) => exportStorage === "local" ? ExportStorage.local : ExportStorage.s3)
  )
}
