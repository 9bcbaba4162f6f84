/** How each upstream deployment fares: the same shape in the admin API and the console API. */
import { Schema } from "effect"
import { upstreamKinds } from "../../domain/deployments"

export const UpstreamDeploymentView = Schema.Struct({
  route: Schema.String.annotations({ description: "The provider and region it serves: `provider_a/eu`." }),
  deployment: Schema.String.annotations({ description: "Its name in the routes file (a `simulator-…` name for a route served by the built-in simulator)." }),
  kind: Schema.Literal(...upstreamKinds),
  state: Schema.Literal("available", "cooling").annotations({
    description: "cooling: skipped by requests until `coolingUntil` (its retry-after, else cooldownSeconds), unless every deployment of the route is cooling."
  }),
  coolingUntil: Schema.optional(Schema.String).annotations({ description: "When it is tried again (ISO 8601); only while cooling." }),
  lastError: Schema.optional(Schema.String).annotations({
    description: "Why its last failed attempt failed, in the service's words (never the upstream's text)."
  }),
  requests: Schema.Int.annotations({ description: "Attempts sent to it since this instance started." }),
  failures: Schema.Int.annotations({ description: "Of these, the ones that failed over (connection, timeout, 408, 429, 5xx)." })
}).annotations({ identifier: "UpstreamDeployment" })

export const UpstreamsView = Schema.Struct({ data: Schema.Array(UpstreamDeploymentView) })
  .annotations({ identifier: "Upstreams" })
