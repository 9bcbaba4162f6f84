import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { Problem } from "../domain/problem"
import type { Workspace } from "../domain/workspace"
import { admissionHeaders, exportsStyle, renderRefusal } from "../providers/render"
import type { ExportQueueTimeout } from "../services/exports/ExportService/exportSlots"
import type { RateLimits } from "../services/limits/RateLimits"

/** How soon an export that found no slot is told to try again: exports take seconds to minutes. */
const QUEUE_RETRY_AFTER_SECONDS = 10

const withHeaders = (headers: Readonly<Record<string, string>>) =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/**
 * An export run by a person (console) or the operator (admin API) counts against the workspace's usage-export
 * limit like a public one: the limit is the workspace's, whoever runs it. Its rate-limit headers go on the
 * answer, refused or not; a refusal is the problem to answer with, in the caller's format.
 */
export const admitWorkspaceExport = (rateLimits: RateLimits["Type"], workspace: Workspace): Effect.Effect<void, Problem> =>
  rateLimits.admit({ principal: { keyId: "console", scopes: [], workspace }, family: "usage_export", tokens: 0 }).pipe(
    Effect.matchEffect({
      onFailure: (refusal) => {
        const { headers, problem } = renderRefusal(exportsStyle, refusal)
        return Effect.zipRight(withHeaders(headers), Effect.fail(problem))
      },
      onSuccess: ({ readings }) => withHeaders(admissionHeaders(exportsStyle, readings))
    })
  )

/** `retry-after` on the answer to an export that waited for a slot in vain (429 or 503, see `asExportError`). */
export const retryAfterQueueTimeout = <A, E extends { readonly _tag: string }, R>(
  self: Effect.Effect<A, E | ExportQueueTimeout, R>
): Effect.Effect<A, E | ExportQueueTimeout, R> =>
  Effect.tapErrorTag(self, "ExportQueueTimeout", () => withHeaders({ "retry-after": String(QUEUE_RETRY_AFTER_SECONDS) }))
