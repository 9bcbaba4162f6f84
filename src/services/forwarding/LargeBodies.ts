import { Context, Effect, Either, Layer } from "effect"
import { largeBodyLimits } from "../../domain/requestBounds"
import { LargeBodiesBusy } from "../../domain/refusals"

/**
 * Ends a request's hold on its large-body slot: its body was parsed, decoded and counted, and it goes upstream
 * now (EndpointForwarding runs it before the Forwarder), where it waits without using the slot. Idempotent.
 * Handed to the work as a value (a request with a small body has none): no fiber-local lookup on every request.
 */
export type ReleaseLargeBodySlot = Effect.Effect<void>

/** A large body let in: it may be received, then processed in its turn. */
export interface LargeBodyTicket {
  /**
   * Runs the body's processing (parsing, decoding, checking, counting) holding one of the instance's slots,
   * waiting its turn for one: until `work` ends, or until it runs the release it is given (as it goes upstream).
   */
  readonly process: <A, E, R>(work: (release: ReleaseLargeBodySlot) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Leaves (once; again is nothing): when the request is done with its body, whatever became of it. */
  readonly leave: () => void
}

/**
 * The forwarded requests whose bodies are large (requestBounds.largeBodyBytes) are let in a few at a time: each
 * costs its size several times over in memory and tens of milliseconds of the event loop while it is received,
 * parsed, decoded, checked and counted; four of 10 MB at once ran the heap out, and bodies received without bound
 * could fill the memory with buffers. At most `reading + waiting` are let in per instance (received, in line, or
 * processed) and no workspace more than `perWorkspace` of them, so that one workspace's bodies never fill the
 * room; of those, `reading` are processed at once, first come first served (a request whose client leaves leaves
 * the line). Beyond: LargeBodiesBusy, before the body is read (503 for the instance, 429 for the workspace).
 */
export class LargeBodies extends Context.Tag("LargeBodies")<LargeBodies, {
  readonly admit: (workspaceId: string) => Either.Either<LargeBodyTicket, LargeBodiesBusy>
}>() {
  static readonly layerWith = (limits: { readonly reading: number; readonly waiting: number; readonly perWorkspace: number }) =>
    Layer.effect(
      LargeBodies,
      Effect.gen(function*() {
        const slots = yield* Effect.makeSemaphore(limits.reading)
        // Let in (received, in line or processed): on the instance, and per workspace (entries removed at zero).
        let admitted = 0
        const byWorkspace = new Map<string, number>()
        const instanceBusy = Either.left(new LargeBodiesBusy({ scope: "instance", limit: limits.reading + limits.waiting }))
        const workspaceBusy = Either.left(new LargeBodiesBusy({ scope: "workspace", limit: limits.perWorkspace }))
        return {
          admit: (workspaceId) => {
            const mine = byWorkspace.get(workspaceId) ?? 0
            if (mine >= limits.perWorkspace) return workspaceBusy
            if (admitted >= limits.reading + limits.waiting) return instanceBusy
            admitted += 1
            byWorkspace.set(workspaceId, mine + 1)
            let left = false
            let held = false
            const leave = () => {
              if (left) return
              left = true
              admitted -= 1
              const others = (byWorkspace.get(workspaceId) ?? 1) - 1
              if (others === 0) byWorkspace.delete(workspaceId)
              else byWorkspace.set(workspaceId, others)
            }
            // Idempotent: run as the body goes upstream, and again when its work ends.
            const release = Effect.suspend(() => {
              leave()
              if (!held) return Effect.void
              held = false
              return slots.release(1)
            })
            return Either.right({
              leave,
              process: (work) =>
                Effect.uninterruptibleMask((restore) =>
                  restore(slots.take(1)).pipe(
                    Effect.tap(() => {
                      held = true
                    }),
                    Effect.zipRight(restore(work(release))),
                    Effect.ensuring(release)
                  )
                )
            })
          }
        }
      })
    )

  static readonly layer = LargeBodies.layerWith(largeBodyLimits)
}

/** Lets a large body in, processes it with `work`, and leaves: the whole course of one body (tests, one-step callers). */
export const withLargeBodySlot = <A, E, R>(
  bodies: LargeBodies["Type"],
  workspaceId: string,
  work: (release: ReleaseLargeBodySlot) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | LargeBodiesBusy, R> =>
  Either.match(bodies.admit(workspaceId), {
    onLeft: (busy) => Effect.fail(busy),
    onRight: (ticket) => Effect.ensuring(ticket.process(work), Effect.sync(ticket.leave))
  })
