// `GET /v1/models`: the simulated providers' model lists, an authenticated call that costs nothing (the
// service checks a workspace's provider key with it before saving the key).
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { chatCompletionModels, embeddingModels, fimModels, messagesModels } from "./catalog"
import { credentialRefusal, errorResponse } from "./endpoint"
import { providerADialect } from "./providerA/dialect"
import { providerBDialect } from "./providerB/dialect"
import { SimulatorSettings } from "./settings"

/** Fixed, so that lists are the same on every call. */
const created = 1_700_000_000

/** The messages protocol's clients send its version header: they get its list format, everyone else the chat-completions one. */
export const serveModels = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const settings = yield* SimulatorSettings
  const header = (name: string) => request.headers[name]
  const messagesProtocol = header("anthropic-version") !== undefined
  const dialect = messagesProtocol ? providerBDialect : providerADialect
  const requestId = yield* dialect.newRequestId
  const refusal = credentialRefusal(settings, dialect, header, undefined)
  if (refusal !== undefined) return errorResponse(dialect, refusal, requestId, settings.retryAfterMs)
  if (messagesProtocol) {
    const ids = [...messagesModels.keys()]
    return HttpServerResponse.unsafeJson(
      {
        data: ids.map((id) => ({ type: "model", id, display_name: id, created_at: new Date(created * 1000).toISOString() })),
        has_more: false,
        first_id: ids[0] ?? null,
        last_id: ids.at(-1) ?? null
      },
      { headers: { [dialect.requestIdHeader]: requestId } }
    )
  }
  const ids = [...chatCompletionModels.keys(), ...embeddingModels.keys(), ...fimModels.keys()]
  return HttpServerResponse.unsafeJson(
    { object: "list", data: ids.map((id) => ({ id, object: "model", created, owned_by: "simulator" })) },
    { headers: { [dialect.requestIdHeader]: requestId } }
  )
})
