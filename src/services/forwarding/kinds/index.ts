import { Effect } from "effect"
import type { Deployment, UpstreamKindName } from "../../../domain/deployments"
import { UpstreamFailure } from "../UpstreamClient"
import { nativeKind } from "./native"
import type { UpstreamKind } from "./UpstreamKind"

/** One kind of upstream per name: a missing one fails to compile. */
export type UpstreamKinds = { readonly [K in UpstreamKindName]: UpstreamKind<Extract<Deployment, { readonly kind: K }>> }

/** The kind that serves a deployment (the record is keyed by the deployment's own `kind`, so the pair always agrees). */
export const kindOf = <D extends Deployment>(kinds: UpstreamKinds, deployment: D): UpstreamKind<D> =>
  kinds[deployment.kind] as unknown as UpstreamKind<D>

const notYet = <K extends UpstreamKindName>(kind: K): UpstreamKind<Extract<Deployment, { readonly kind: K }>> => ({
  kind: kind as Deployment["kind"],
  prepare: () => Effect.fail(new UpstreamFailure({ kind: "unreachable", detail: `upstream kind ${kind} is not available in this build` })),
  streamContentType: "text/event-stream",
  streamDecoder: nativeKind.streamDecoder,
  errorAnswer: (status, _headers, body) => ({ status, body })
} as UpstreamKind as unknown as UpstreamKind<Extract<Deployment, { readonly kind: K }>>)

/** Every kind of upstream, made once for the service's life (a kind may keep state, such as tokens). */
export const makeUpstreamKinds: Effect.Effect<UpstreamKinds> = Effect.succeed({
  native: nativeKind,
  azure: notYet("azure"),
  bedrock: notYet("bedrock"),
  vertex: notYet("vertex")
})
