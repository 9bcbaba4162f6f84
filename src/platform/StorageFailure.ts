import { Data } from "effect"

/** Storage failures are not the caller's fault: they surface as 5xx/503, never as "not found". */
export class StorageFailure extends Data.TaggedError("StorageFailure")<{ readonly cause: unknown }> {}
