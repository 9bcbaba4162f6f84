// What differs between the providers at the HTTP level: error bodies, statuses, request ids, in-band stream errors.
import type { Effect } from "effect"
import type { ErrorKind, SimulatorError } from "./simulatorError"

export interface Dialect {
  readonly errorStatus: (kind: ErrorKind) => number
  readonly errorBody: (error: SimulatorError, requestId: string) => unknown
  /** The SSE text of an error that happens after the stream has started. */
  readonly streamError: (error: SimulatorError) => string
  /** An SSE event whose JSON is cut short, as a broken upstream may send. */
  readonly malformedEvent: string
  readonly requestIdHeader: string
  readonly newRequestId: Effect.Effect<string>
  /** Error answered when the credential is missing, or wrong. */
  readonly missingKey: SimulatorError
  readonly wrongKey: SimulatorError
  /** Where the request's key is read from; undefined: a bearer token or x-api-key. */
  readonly credential?: (header: (name: string) => string | undefined) => string | undefined
}
