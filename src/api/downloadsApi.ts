import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { exportErrors } from "./errors/exportError"
import { OperationFamily } from "./openapi/annotations"
import { families } from "./openapi/families"

// The three segments of an export file path: <kind>-usage/<workspace_id>/<file>.csv
const folder = HttpApiSchema.param("folder", Schema.String)
const workspaceId = HttpApiSchema.param("workspaceId", Schema.String)
const file = HttpApiSchema.param("file", Schema.String)

/**
 * Signed download links of exports kept in local storage. No API key: the signature is the
 * credential. A missing, changed or expired signature is 403; a signed file that is gone is 404.
 */
/**
 * A query parameter given once. Given several times it reads as absent (so the link is refused as
 * not valid), never as a decode error that would echo the values: they are signatures.
 */
const singleParam = Schema.transform(Schema.Union(Schema.String, Schema.Array(Schema.String)), Schema.UndefinedOr(Schema.String), {
  strict: true,
  decode: (value) => (typeof value === "string" ? value : undefined),
  encode: (value) => value ?? ""
})

export class DownloadsApi extends HttpApiGroup.make("downloads")
  .add(
    HttpApiEndpoint.get("download")`/downloads/${folder}/${workspaceId}/${file}`
      .setUrlParams(Schema.Struct({
        expires: Schema.optional(singleParam).annotations({ description: "Unix seconds after which the link is refused" }),
        signature: Schema.optional(singleParam).annotations({
          description: "hex HMAC-SHA256 of `<filePath>\\n<expires>` under the server secret"
        })
      }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/csv" }))
      .annotate(OpenApi.Summary, "Download an export file (local storage)")
      .annotate(
        OpenApi.Description,
        "The `downloadUrl` of an export answer when EXPORT_STORAGE=local. Streams the CSV as an attachment. " +
          "With EXPORT_STORAGE=s3 the links are presigned object-store URLs instead and this route answers 404."
      )
  )
  // 403 a missing, changed or expired signature; 404 a file gone (or S3 storage); 500 the file unreadable.
  .addError(exportErrors(403, 404, 500))
  .annotate(OperationFamily, families.usageExports)
{}
