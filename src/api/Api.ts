import { HttpApi, OpenApi } from "@effect/platform"
import { AdminApi } from "./adminApi"
import { ConsoleAccountApi, ConsoleApi, ConsoleSessionApi } from "./consoleApi"
import { consoleErrorSchema } from "./errors/consoleError"
import { DownloadsApi } from "./downloadsApi"
import { adminErrorSchema } from "./errors/adminError"
import { exportErrorSchema } from "./errors/exportError"
import { providerAErrorSchema } from "../providers/providerA/error"
import { providerBErrorSchema } from "../providers/providerB/error"
import { providerCErrorSchema } from "../providers/providerC/error"
import { ExportsApi } from "./exportsApi"
import { HealthApi } from "./healthApi"
import { MetricsApi } from "./metricsApi"
import { refineDocument } from "./openapi/refineDocument"
import { ProviderAApi, ProviderBApi, ProviderCApi } from "./providerApis"

const declared = HttpApi.make("workspace-api")
  .add(ExportsApi)
  .add(DownloadsApi)
  .add(ProviderAApi)
  .add(ProviderBApi)
  .add(ProviderCApi)
  .add(AdminApi)
  .add(ConsoleSessionApi)
  .add(ConsoleAccountApi)
  .add(ConsoleApi)
  .add(HealthApi)
  .add(MetricsApi)
  // Failures raised before a handler runs (bad JSON, unknown route) are rendered in the format of the
  // path, and upstream refusals pass through with their own status: the one error encoder knows every
  // format at every status. The document shows each operation only what it declares (its group, its
  // middleware, itself): see ./openapi/refineDocument.ts.
  .addError(exportErrorSchema)
  .addError(providerAErrorSchema)
  .addError(providerBErrorSchema)
  .addError(providerCErrorSchema)
  .addError(adminErrorSchema)
  .addError(consoleErrorSchema)
  .annotate(OpenApi.Title, "Workspace API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Workspace-scoped API keys, usage exports as CSV, and forwarded chat completions, embeddings, messages and FIM."
  )

/** The whole HTTP contract of the service; OpenAPI and /docs are generated from it. */
export class WorkspaceApi extends declared.annotate(OpenApi.Transform, refineDocument(declared)) {}
