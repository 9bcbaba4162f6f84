import { Context, Effect, Either, Layer } from "effect"
import type { Principal } from "../../domain/principal"
import type { Refusal } from "../../domain/refusals"
import type { EndpointCheck, EndpointDeclaration } from "../endpoints/endpointCall"
import { type Forwarded, Forwarder } from "./Forwarder"
import type { ReleaseLargeBodySlot } from "./LargeBodies"
import { flatMapNow } from "./decidedNow"
import { Routes } from "./Routes"

/** How an endpoint's requests are served once decoded. */
export type ServeEndpoint<Payload> = (
  principal: Principal,
  region: string,
  payload: Payload,
  requestId: string | undefined,
  headers: Readonly<Record<string, string | undefined>>,
  /** A large body's slot, given back once the request was checked and counted (it goes upstream). */
  release: ReleaseLargeBodySlot | undefined
) => Effect.Effect<Forwarded, Refusal>

/**
 * The one procedure of every forwarded endpoint: its declaration says what it is (provider, path, family, ledger
 * name, protocol, operation), the route of the region is found (or the region refused), the endpoint's check
 * makes the call, and the Forwarder admits it against the limits, sends it to the route's deployments and
 * records it. Adding an endpoint is its declaration, its wire schema and its check.
 */
export class EndpointForwarding extends Context.Tag("EndpointForwarding")<EndpointForwarding, {
  readonly serve: <Payload>(endpoint: EndpointDeclaration, check: EndpointCheck<Payload>) => ServeEndpoint<Payload>
}>() {
  static readonly layer = Layer.effect(
    EndpointForwarding,
    Effect.map(Effect.all([Forwarder, Routes]), ([forwarder, routes]) => ({
      serve: <Payload>(endpoint: EndpointDeclaration, check: EndpointCheck<Payload>): ServeEndpoint<Payload> => (principal, region, payload, requestId, headers, release) => {
        const route = routes.route(endpoint.provider, region)
        if (Either.isLeft(route)) return Effect.fail(route.left)
        // The call is not copied into another object: the Forwarder builds its exchange once from the pieces.
        return flatMapNow(check({ principal, region, route: route.right, payload, headers }), (call) => {
          const forwarded = forwarder.forward(endpoint, principal, region, route.right, requestId, call)
          // A large body was read, checked and counted: its slot goes to the next while this one is upstream.
          return release === undefined ? forwarded : Effect.zipRight(release, forwarded)
        })
      }
    }))
  )
}
