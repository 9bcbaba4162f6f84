import { Effect } from "effect"
import type { NativeDeployment } from "../../../domain/deployments"
import { boundedSseDecoder } from "../../../domain/sse"
import type { UpstreamKind } from "./UpstreamKind"

/**
 * The provider's own API (or any server that speaks it): the provider's path appended to the deployment's url, the
 * key as the provider takes it (the workspace's own when it brought one), the body and the answers as they are.
 */
export const nativeKind: UpstreamKind<NativeDeployment> = {
  kind: "native",
  prepare: (deployment, call) =>
    Effect.succeed({
      url: `${deployment.url}${call.path}`,
      method: "POST",
      headers: { ...call.headers, ...call.provider.upstreamAuth(call.ownKey ?? deployment.apiKey) },
      body: JSON.stringify(call.body)
    }),
  streamContentType: "text/event-stream",
  streamDecoder: boundedSseDecoder,
  errorAnswer: (status, _headers, body) => ({ status, body })
}
