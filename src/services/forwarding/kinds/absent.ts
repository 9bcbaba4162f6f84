import { Effect } from "effect"
import type { Deployment } from "../../../domain/deployments"
import { UpstreamFailure } from "../UpstreamFailure"
import type { UpstreamKind } from "./UpstreamKind"

/**
 * The stand-in for a kind that no deployment of the routes uses, whose code is then never loaded (kinds/index.ts).
 * Kinds are looked up by a deployment's own kind, so it is never called; were it, it refuses as unreachable.
 */
export const absentKind = <D extends Deployment>(kind: D["kind"]): UpstreamKind<D> => ({
  kind,
  secrets: () => [],
  prepare: () => Effect.fail(new UpstreamFailure({ kind: "unreachable", detail: `no ${kind} deployment is configured` })),
  streamContentType: "text/event-stream",
  streamDecoder: () => ({ feed: () => undefined }),
  errorAnswer: (status, _headers, body) => ({ status, body })
})
