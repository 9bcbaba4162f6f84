import type { Redacted } from "effect"
import type { ModelInfo } from "./models"
import type { ProviderId } from "./providerId"

/**
 * Routes and deployments (DESIGN "Upstreams: routes and deployments"): each provider and region is a route,
 * served by one or more deployments, each of one kind of upstream. These are the resolved values: the
 * routes file read and checked, its secrets read from the environment or files.
 */

/** The kinds of upstream: how a request is addressed, authorized, encoded and framed. */
export const upstreamKinds = ["native", "azure", "bedrock", "vertex"] as const
export type UpstreamKindName = (typeof upstreamKinds)[number]

/** Which forwarded operation a call is: the kinds address each one their own way. */
export type UpstreamOperation = "chat_completions" | "embeddings" | "messages" | "count_tokens" | "fim_completions" | "responses"

/** A provider and region as the path names them: `provider_a/eu`. */
export type RouteId = `${ProviderId}/${string}`

export const routeId = (provider: ProviderId, region: string): RouteId => `${provider}/${region}`

interface DeploymentBase {
  /** Unique among all routes: logs, metrics (label `deployment`), the ledger, /admin/upstreams. */
  readonly name: string
  readonly route: RouteId
  readonly provider: ProviderId
  readonly region: string
  /** Lower first: a deployment of a higher priority is tried only when none of a lower one can take the request. */
  readonly priority: number
  /** Share among the deployments of the same priority. */
  readonly weight: number
  /**
   * The gateway's model id → the upstream's model id or deployment name. Undefined: every catalog model of the
   * provider, under the catalog's id (a `native` deployment only).
   */
  readonly models: ReadonlyMap<string, string> | undefined
  /** The upstream's root, without a trailing slash: `https://…`, paths are appended. */
  readonly url: string
  /** True for the built-in simulator standing in for a route named nowhere. */
  readonly simulated: boolean
}

/** The provider's own API: `{url}/v1/…`, the key as the provider's clients send it. */
export interface NativeDeployment extends DeploymentBase {
  readonly kind: "native"
  readonly apiKey: Redacted.Redacted<string>
}

/** provider_a on Azure: deployment URLs with `api-version` (classic), or `/openai/v1` with the deployment as `model`. */
export interface AzureDeployment extends DeploymentBase {
  readonly kind: "azure"
  /** The classic deployments API's version; undefined: the `/openai/v1` API. */
  readonly apiVersion: string | undefined
  readonly apiKey: Redacted.Redacted<string>
}

/** Static AWS credentials, or the standard chain (environment, shared files, instance or task role). */
export type AwsCredentials =
  | {
    readonly _tag: "Static"
    readonly accessKeyId: string
    readonly secretAccessKey: Redacted.Redacted<string>
    readonly sessionToken: Redacted.Redacted<string> | undefined
  }
  | { readonly _tag: "Chain" }

/** provider_b on Bedrock: InvokeModel, SigV4-signed. */
export interface BedrockDeployment extends DeploymentBase {
  readonly kind: "bedrock"
  /** The AWS region, e.g. eu-central-1 (what requests are signed for). */
  readonly awsRegion: string
  readonly credentials: AwsCredentials
}

/** A service account's key file (the `vertex` kind's credentials), as read from disk. */
export interface ServiceAccount {
  readonly clientEmail: string
  readonly privateKey: Redacted.Redacted<string>
  readonly privateKeyId: string | undefined
  /** Where its access tokens are fetched: the file's own `token_uri`. */
  readonly tokenUri: string
}

/** provider_b on Vertex: rawPredict / streamRawPredict with an OAuth2 token of a service account. */
export interface VertexDeployment extends DeploymentBase {
  readonly kind: "vertex"
  readonly project: string
  readonly location: string
  readonly serviceAccount: ServiceAccount
}

export type Deployment = NativeDeployment | AzureDeployment | BedrockDeployment | VertexDeployment

/** The routes file's `catalog`: models added to the built-in catalog or replacing its entries of the same id. */
export interface OperatorCatalog {
  /** extend: the built-in catalog with these added or replaced; replace: these alone. */
  readonly mode: "extend" | "replace"
  readonly models: ReadonlyArray<{ readonly info: ModelInfo; readonly pricesPerMillion: { readonly input: number; readonly output: number } }>
}

/** What the routes file (and the UPSTREAM_PROVIDER_* shorthand) resolve to. */
export interface RoutesSetting {
  /** How long a failed deployment is skipped when it gave no retry-after. */
  readonly cooldownSeconds: number
  /** Every route that is named, with its deployments in the file's order. */
  readonly routes: ReadonlyMap<RouteId, ReadonlyArray<Deployment>>
  readonly catalog: OperatorCatalog
}

/** The upstream's id of a model on a deployment, or undefined when the deployment does not serve it. */
export const upstreamModelOf = (deployment: Deployment, model: string, catalogIds: ReadonlySet<string>): string | undefined =>
  deployment.models === undefined ? (catalogIds.has(model) ? model : undefined) : deployment.models.get(model)
