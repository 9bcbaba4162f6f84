import { Effect } from "effect"
import type { BedrockDeployment, Deployment, UpstreamKindName } from "../../../domain/deployments"
import { absentKind } from "./absent"
import { azureKind } from "./azure"
import { nativeKind } from "./native"
import type { UpstreamKind } from "./UpstreamKind"
import { makeVertexKind } from "./vertex"

/** One kind of upstream per name: a missing one fails to compile. */
export type UpstreamKinds = { readonly [K in UpstreamKindName]: UpstreamKind<Extract<Deployment, { readonly kind: K }>> }

/** The kind that serves a deployment (the record is keyed by the deployment's own `kind`, so the pair always agrees). */
export const kindOf = <D extends Deployment>(kinds: UpstreamKinds, deployment: D): UpstreamKind<D> =>
  kinds[deployment.kind] as unknown as UpstreamKind<D>

/** Every deployment's secrets and hosts: none may reach a client through an upstream's words. */
export const secretsOf = (kinds: UpstreamKinds, deployments: ReadonlyArray<Deployment>) => {
  const keys: Array<string> = []
  const hosts: Array<string> = []
  for (const deployment of deployments) {
    if (deployment.simulated) continue
    const url = new URL(deployment.url)
    hosts.push(url.host, url.hostname)
    keys.push(...kindOf(kinds, deployment).secrets(deployment).filter((key) => key !== ""))
  }
  return { keys, hosts }
}

/**
 * Every kind of upstream the routes' deployments use, made once for the service's life (a kind may keep state:
 * credentials, tokens). The bedrock kind's code (AWS's signer and event-stream codec, with much of @smithy/core:
 * ~0.3 MB of script) is imported only when a deployment is of that kind; otherwise its place holds a stand-in that
 * no deployment reaches (bench/RESULTS.md, "Footprint").
 */
export const makeUpstreamKinds = (deployments: ReadonlyArray<Deployment>): Effect.Effect<UpstreamKinds> =>
  Effect.all({
    native: Effect.succeed(nativeKind),
    azure: Effect.succeed(azureKind),
    bedrock: deployments.some((deployment) => deployment.kind === "bedrock")
      ? Effect.flatMap(Effect.promise(() => import("./bedrock")), (bedrock) => bedrock.makeBedrockKind)
      : Effect.succeed(absentKind<BedrockDeployment>("bedrock")),
    vertex: makeVertexKind
  })
