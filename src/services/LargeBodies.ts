import { Context, Effect, FiberRef, Layer } from "effect"
import { largeBodyLimits } from "../domain/requestBounds"
import { LargeBodiesBusy } from "../domain/refusals"

/**
 * Ends the current request's hold on a large-body slot: its body was parsed, decoded and counted, and it goes
 * upstream now (Forwarder.forward runs it), where it waits without using the slot. A no-op for other requests.
 */
export const releaseLargeBodySlot: FiberRef.FiberRef<Effect.Effect<void>> = FiberRef.unsafeMake<Effect.Effect<void>>(Effect.void)

/**
 * The forwarded requests whose bodies are large (requestBounds.largeBodyBytes) are read a few at a time: each
 * costs its size several times over in memory and tens of milliseconds of the event loop while it is parsed,
 * decoded, checked and counted, and four of 10 MB at once ran the heap out. Up to `reading` at once per instance,
 * up to `waiting` more in line (first come, first served; a request whose client leaves leaves the line), and
 * no workspace more than `perWorkspace` of them reading or waiting, so that one workspace's large bodies never
 * fill the line for everyone. Beyond those: LargeBodiesBusy (503 for the instance, 429 for the workspace).
 */
export class LargeBodies extends Context.Tag("LargeBodies")<LargeBodies, {
  /**
   * Runs the reading of one large body holding a slot: until `work` ends, or until it calls
   * releaseLargeBodySlot (as it goes upstream).
   */
  readonly withSlot: <A, E, R>(workspaceId: string, work: Effect.Effect<A, E, R>) => Effect.Effect<A, E | LargeBodiesBusy, R>
}>() {
  static readonly layerWith = (limits: { readonly reading: number; readonly waiting: number; readonly perWorkspace: number }) =>
    Layer.effect(
      LargeBodies,
      Effect.gen(function*() {
        const slots = yield* Effect.makeSemaphore(limits.reading)
        // Reading or waiting: on the instance, and per workspace (entries removed at zero).
        let admitted = 0
        const byWorkspace = new Map<string, number>()
        const instanceBusy = new LargeBodiesBusy({ scope: "instance", limit: limits.reading + limits.waiting })
        const workspaceBusy = new LargeBodiesBusy({ scope: "workspace", limit: limits.perWorkspace })
        const leave = (workspaceId: string) => {
          admitted -= 1
          const left = (byWorkspace.get(workspaceId) ?? 1) - 1
          if (left === 0) byWorkspace.delete(workspaceId)
          else byWorkspace.set(workspaceId, left)
        }
        return {
          withSlot: <A, E, R>(workspaceId: string, work: Effect.Effect<A, E, R>) =>
            Effect.suspend((): Effect.Effect<A, E | LargeBodiesBusy, R> => {
              const mine = byWorkspace.get(workspaceId) ?? 0
              if (mine >= limits.perWorkspace) return Effect.fail(workspaceBusy)
              if (admitted >= limits.reading + limits.waiting) return Effect.fail(instanceBusy)
              admitted += 1
              byWorkspace.set(workspaceId, mine + 1)
              let held = false
              let left = false
              // Idempotent: called when the request goes upstream, and again when its work ends.
              const release = Effect.suspend(() => {
                if (left) return Effect.void
                left = true
                leave(workspaceId)
                if (!held) return Effect.void
                held = false
                return slots.release(1)
              })
              return Effect.uninterruptibleMask((restore) =>
                restore(slots.take(1)).pipe(
                  Effect.tap(() => {
                    held = true
                  }),
                  Effect.zipRight(restore(Effect.locally(work, releaseLargeBodySlot, release))),
                  Effect.ensuring(release)
                )
              )
            })
        }
      })
    )

  static readonly layer = LargeBodies.layerWith(largeBodyLimits)
}
