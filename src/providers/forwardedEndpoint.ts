import type { Schema } from "effect"
import type { UpstreamOperation } from "../domain/deployments"
import type { Catalog } from "../domain/models"
import type { Refusal } from "../domain/refusals"
import type { LimitFamily } from "../domain/workspaceSettings"
import type { Provider } from "./provider"
import type { Protocol } from "./protocol"

/** How the usage ledger names an endpoint. */
export type EndpointRecord = "chat_completions" | "embeddings" | "messages" | "fim_completions" | "responses"

/**
 * One forwarded endpoint, declared once: the HttpApi group (and so the OpenAPI document), its
 * handler, the forwarding lane's route and the endpoint service all read it.
 */
export interface ForwardedEndpoint<Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI> {
  /** The HttpApi endpoint's name. */
  readonly name: Name
  /** Whose format it answers in, where its key may be. */
  readonly provider: P
  /** Under `/<provider>/<region>`, and appended to the upstream's API root. */
  readonly path: `/${string}`
  readonly payload: Schema.Schema<Payload, PayloadI>
  readonly success: Schema.Schema<Success, SuccessI>
  /** What OpenAPI says of the answer beyond its schema (streams). */
  readonly description?: string
  /** How its answers, usage and upstream errors read. */
  readonly protocol: Protocol
  /** What it is to the kinds of upstream, which address each operation their own way. */
  readonly operation: UpstreamOperation
  /** The rate-limit family its requests, refused ones too, count in. */
  readonly family: LimitFamily
  /** Its name in the usage ledger; none for an endpoint that is not a completion (a token count), which is not recorded there. */
  readonly record?: EndpointRecord
  /** A refusal found on the raw body before it is decoded (cheap: counts, not contents), its model read in the gateway's catalog. */
  readonly bound?: (body: unknown, catalog: Catalog) => Refusal | undefined
  /** The same, on the raw bytes of a large body, before it is parsed. */
  readonly scan?: (body: Buffer, catalog: Catalog) => Refusal | undefined
  /** Caller headers the service passes on (never the key). */
  readonly passedHeaders: ReadonlyArray<string>
}

/** Declares an endpoint, keeping its schemas' types. */
export const forwardedEndpoint = <const Name extends string, P extends Provider, Payload, PayloadI, Success, SuccessI>(
  endpoint: ForwardedEndpoint<Name, P, Payload, PayloadI, Success, SuccessI>
) => endpoint
