import { Effect, Exit } from "effect"

/**
 * Steps over an effect that may already be its own success: `Effect.succeed` is an Exit, and a remembered key, an
 * endpoint's check of a short prompt, a request without a budget or a native kind's prepared call are answered so.
 * The continuation then runs at once with the same value, without the frame and the two steps of the fiber (the
 * continuation's push and the success's) that Effect.flatMap or matchEffect cost; anything else goes through them.
 */

/** Whether `self` is already its own success (an Exit), its value then read as `self.value`. */
export const succeeded = <A, E, R>(self: Effect.Effect<A, E, R>): self is Exit.Success<A, E> => Exit.isExit(self) && Exit.isSuccess(self)

/** Effect.flatMap, run at once on an effect that is already a success. */
export const flatMapNow = <A, E, R, B, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (value: A) => Effect.Effect<B, E2, R2>
): Effect.Effect<B, E | E2, R | R2> => succeeded(self) ? f(self.value) : Effect.flatMap(self, f)

/** Effect.matchEffect, its success branch taken at once on an effect that is already a success. */
export const matchEffectNow = <A, E, R, B, E2, R2, C, E3, R3>(
  self: Effect.Effect<A, E, R>,
  cases: { readonly onFailure: (error: E) => Effect.Effect<C, E3, R3>; readonly onSuccess: (value: A) => Effect.Effect<B, E2, R2> }
): Effect.Effect<B | C, E2 | E3, R | R2 | R3> => succeeded(self) ? cases.onSuccess(self.value) : Effect.matchEffect(self, cases)
