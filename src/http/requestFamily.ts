import type { LimitFamily } from "../domain/workspaceSettings"

/**
 * The `family` label of a request counted at /metrics: a small fixed set (never a path, an id or a
 * region, which would make a series per value). Forwarded endpoints count under their rate-limit
 * family; the rest by area of the API.
 */
export type RequestFamily = LimitFamily | "models" | "downloads" | "admin" | "console" | "operations" | "other"

const forwarded: ReadonlyArray<readonly [suffix: string, family: RequestFamily]> = [
  ["/v1/chat/completions", "chat_completions"],
  ["/v1/embeddings", "embeddings"],
  ["/v1/messages", "messages"],
  // Counted as a messages request, as the forwarding lane counts it (its rate-limit family).
  ["/v1/messages/count_tokens", "messages"],
  ["/v1/fim/completions", "fim"],
  ["/v1/responses", "responses"]
]

/** The family of a path below BASE_PATH (without the query). */
export const requestFamily = (path: string): RequestFamily => {
  if (path.startsWith("/provider_")) {
    for (const [suffix, family] of forwarded) if (path.endsWith(suffix)) return family
    return path.includes("/v1/models") ? "models" : "other"
  }
  if (path.startsWith("/export/")) return "usage_export"
  if (path.startsWith("/downloads/")) return "downloads"
  if (path === "/admin" || path.startsWith("/admin/")) return "admin"
  if (path === "/console" || path.startsWith("/console/")) return "console"
  if (path === "/healthz" || path === "/readyz" || path === "/metrics" || path === "/openapi.json" || path === "/docs") return "operations"
  return "other"
}
