import { Effect, Redacted } from "effect"
import type { NativeDeployment } from "../../../domain/deployments"
import { boundedSseDecoder } from "../../../domain/sse"
import type { UpstreamKind } from "./UpstreamKind"

const contentType: Readonly<Record<string, string>> = { "content-type": "application/json" }

/**
 * The provider's own API (or any server speaking it): the provider's path appended to the deployment's url, the
 * key as the provider's clients send it — the workspace's own (BYOK) when it has one, the deployment's otherwise.
 * Requests, streams and errors are already in the provider's format: nothing to rewrite.
 */
export const nativeKind: UpstreamKind<NativeDeployment> = {
  kind: "native",
  secrets: (deployment) => [Redacted.value(deployment.apiKey)],
  prepare: (deployment, call) =>
    Effect.succeed({
      url: `${deployment.url}${call.path}`,
      method: "POST",
      // Object.assign rather than a literal with two spreads, which makes new maps each call (Node 20): same object.
      headers: Object.assign({}, call.headers, contentType, call.provider.upstreamAuth(call.ownKey ?? deployment.apiKey)),
      body: JSON.stringify(call.body)
    }),
  streamContentType: "text/event-stream",
  streamDecoder: boundedSseDecoder,
  errorAnswer: (status, _headers, body) => ({ status, body })
}
