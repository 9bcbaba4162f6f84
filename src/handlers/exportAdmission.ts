import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { Problem } from "../domain/problem"
import type { Workspace } from "../domain/workspace"
import { admissionHeaders, exportsStyle, renderRefusal } from "../providers/render"
import type { RateLimits } from "../services/RateLimits"

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
