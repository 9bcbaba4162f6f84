import type { LimitFamily } from "../../domain/workspaceSettings"
import type { DocumentedFamily } from "./annotations"

/** The tags of the OpenAPI document: one per family of operations, each in its own error format. */
export const families = {
  chatCompletions: {
    name: "chat completions",
    description: "Chat completions of provider_a, in the chat-completions wire format: the `openai` client library works " +
      "against `/provider_a/{region}/v1`. Errors are `{ error: { message, type, param, code } }`."
  },
  responses: {
    name: "responses",
    description: "The Responses API of provider_a, stateless: the `openai` client library's `responses.create`, `.stream` " +
      "and `.parse` work against `/provider_a/{region}/v1`. Nothing is stored: `store: true`, `previous_response_id`, " +
      "`conversation` and `background: true` are refused; the client sends the conversation as `input`. Errors are " +
      "the chat completions' `{ error: { message, type, param, code } }`."
  },
  embeddings: {
    name: "embeddings",
    description: "Embeddings of provider_a, in the same wire format and error format as the chat completions."
  },
  messages: {
    name: "messages",
    description: "Messages of provider_b, in the messages wire format: the `@anthropic-ai/sdk` client library works against " +
      "`/provider_b/{region}`. The key goes in `x-api-key` or as a bearer token. Errors are `{ type: \"error\", error: { type, message } }`."
  },
  fim: {
    name: "FIM",
    description: "Fill-in-the-middle code completion of provider_c, in the FIM wire format: the `@mistralai/mistralai` client " +
      "library works against `/provider_c/{region}`. Errors are `{ object: \"error\", message, type, param, code }`."
  },
  usageExports: {
    name: "usage exports",
    description: "Usage exports as CSV files (a key with USAGE_EXPORT_API) and their signed download links. " +
      "Errors are `{ success: false, error: { code, message, field? } }`."
  },
  admin: {
    name: "admin",
    description: "The operator's API, behind the bearer ADMIN_TOKEN: workspaces, their API keys, members, provider keys, " +
      "activity ingestion and audit. Errors are `{ error: { code, message, field? } }`."
  },
  console: {
    name: "console",
    description: "The web console's API: sign-in sets an HttpOnly session cookie; state-changing calls must come from " +
      "PUBLIC_URL's origin. Errors are `{ error: { code, message, field? } }`."
  },
  health: {
    name: "health",
    description: "Liveness and readiness for orchestrators: 200 when up, 503 `{ status: \"unavailable\", reason }` when not."
  }
} as const satisfies Record<string, DocumentedFamily>

/** The tag of a forwarded endpoint, from the rate-limit family its requests count in. */
export const forwardedFamilies: { readonly [F in Exclude<LimitFamily, "usage_export">]: DocumentedFamily } = {
  chat_completions: families.chatCompletions,
  embeddings: families.embeddings,
  messages: families.messages,
  fim: families.fim,
  responses: families.responses
}
