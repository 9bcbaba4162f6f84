import { FiberRef } from "effect"

/** The id of the request being served (set by the request-context middleware), for the usage ledger. */
export const currentRequestId: FiberRef.FiberRef<string | undefined> = FiberRef.unsafeMake<string | undefined>(undefined)

/** The response headers the client libraries read the request id from. */
export const requestIdHeaders = (requestId: string): Record<string, string> => ({ "x-request-id": requestId, "request-id": requestId })
