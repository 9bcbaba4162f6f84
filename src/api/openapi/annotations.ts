import { Context } from "effect"

// What the OpenAPI document says of an operation beyond what HttpApi generates from its schemas.
// Set on an endpoint (or, for the tag, on its group); read once by ./refineDocument.ts.
//
// A new endpoint declares (test/api/openapi/document.test.ts checks it):
// - its errors, in its family's format, at the statuses it answers: `.addError(adminErrors(404, 409))`
//   (its group's and its middleware's are added to it; the API's own are not documented);
// - `OpenApi.annotations({ summary, description })`;
// - its family: `OperationFamily` (families.ts), unless its group sets one;
// - with a body, `RequestExample` (a body its payload decodes, that works as is).
// A forwarded endpoint gets all of this from `post(endpoint, { summary, description, example })` in
// providerApis.ts, with the catalog's models and the provider's regions as `Choices`.

/** The family an operation belongs to: its one tag in the document, described there once. */
export interface DocumentedFamily {
  readonly name: string
  readonly description: string
}

/** The operation's tag. Set on a group for all its endpoints, or on an endpoint. */
export class OperationFamily extends Context.Tag("workspace-api/openapi/OperationFamily")<OperationFamily, DocumentedFamily>() {}

/** A request body that works as is: the docs page's "Try it out" sends it. */
export class RequestExample extends Context.Tag("workspace-api/openapi/RequestExample")<RequestExample, unknown>() {}

/**
 * Values a path parameter or a top-level body field takes, documented as an enum. Documentation only:
 * decoding still takes any string, so an unknown value is refused by the service's own check, with
 * its status and words (a 404 naming the models list, not a schema's 400).
 */
export interface DocumentedChoices {
  readonly path?: Readonly<Record<string, ReadonlyArray<string>>>
  readonly body?: Readonly<Record<string, ReadonlyArray<string>>>
}
export class Choices extends Context.Tag("workspace-api/openapi/Choices")<Choices, DocumentedChoices>() {}

/**
 * The operation passes the upstream provider's refusals (4xx) through with their status, in its own
 * error format: documented as one `4XX` answer besides the statuses the service answers itself.
 */
export class PassesUpstreamRefusals extends Context.Tag("workspace-api/openapi/PassesUpstreamRefusals")<PassesUpstreamRefusals, true>() {}
