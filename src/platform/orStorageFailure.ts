import { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { StorageFailure } from "./StorageFailure"

/** A database failure becomes StorageFailure (503 at the edge); the effect's own refusals pass unchanged. */
export const orStorageFailure = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError.SqlError> | StorageFailure, R> =>
  Effect.mapError(effect, (error): Exclude<E, SqlError.SqlError> | StorageFailure =>
    error instanceof SqlError.SqlError
      ? new StorageFailure({ cause: error })
      // Not a SqlError, so a member of the rest of E.
      : (error as Exclude<E, SqlError.SqlError>))
