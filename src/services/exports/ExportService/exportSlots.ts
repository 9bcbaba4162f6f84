import { Data, Deferred, Duration, Effect, Exit } from "effect"

/**
 * No slot came free within the wait: `workspace` when the workspace's own exports held all of its slots,
 * `instance` when other workspaces' exports held every slot of the instance.
 */
export class ExportQueueTimeout extends Data.TaggedError("ExportQueueTimeout")<{
  readonly heldBy: "workspace" | "instance"
  /** The limit that held it: the workspace's or the instance's exports at once. */
  readonly limit: number
  readonly waitedMs: number
}> {}

export interface ExportSlotLimits {
  /** Exports running at once on the instance. */
  readonly perInstance: number
  /** Exports of one workspace running at once. */
  readonly perWorkspace: number
  /** Longest wait for a slot. */
  readonly maxWaitMs: number
}

export interface ExportSlots {
  /**
   * Runs `self` in one of the workspace's slots, waiting for one at most `maxWaitMs`; the slot is given back
   * when `self` ends, however it ends. An interrupted wait leaves the queue.
   */
  readonly withSlot: (
    workspaceId: string
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ExportQueueTimeout, R>
  /** Exports running and waiting now (the `wsapi_exports` gauge; tests). */
  readonly counts: () => { readonly running: number; readonly waiting: number }
}

interface Waiter {
  readonly workspaceId: string
  readonly admitted: Deferred.Deferred<void>
  /** Set when a slot was given to it: a wait that ends otherwise gives it back. */
  granted: boolean
}

/**
 * The instance's export slots, shared fairly by workspaces: at most `perInstance` exports run at once and at
 * most `perWorkspace` of one workspace. Waiting exports queue per workspace; when a slot comes free it goes to
 * the waiting workspace with the fewest exports running, and among equals to the one whose turn came longest
 * ago (round robin). So one workspace's eight exports never stand in front of another's one: the other's
 * waits at most for the next export to end anywhere, and not at all while the instance has a slot that the
 * first workspace may not take.
 *
 * The state is plain data changed only inside `Effect.sync` (one thread): every change ends with no waiter
 * left that could run, so a newcomer that finds a slot for its workspace takes it without passing anyone.
 */
export const makeExportSlots = (limits: ExportSlotLimits): Effect.Effect<ExportSlots> =>
  Effect.sync(() => {
    const runningBy = new Map<string, number>()
    let running = 0
    // Insertion order is the round: a workspace goes to the back when one of its exports is admitted.
    const queues = new Map<string, Array<Waiter>>()

    const runningOf = (workspaceId: string) => runningBy.get(workspaceId) ?? 0
    const mayStart = (workspaceId: string) => running < limits.perInstance && runningOf(workspaceId) < limits.perWorkspace

    const take = (workspaceId: string) => {
      running += 1
      runningBy.set(workspaceId, runningOf(workspaceId) + 1)
    }

    /** Admits waiters while slots are free: the eligible workspace with the fewest running, first in the round. */
    const admitWaiting = () => {
      while (running < limits.perInstance) {
        let chosen: string | undefined
        for (const workspaceId of queues.keys()) {
          if (runningOf(workspaceId) >= limits.perWorkspace) continue
          if (chosen === undefined || runningOf(workspaceId) < runningOf(chosen)) chosen = workspaceId
        }
        if (chosen === undefined) return
        const queue = queues.get(chosen)!
        const waiter = queue.shift()!
        queues.delete(chosen)
        if (queue.length > 0) queues.set(chosen, queue)
        waiter.granted = true
        take(chosen)
        Deferred.unsafeDone(waiter.admitted, Exit.void)
      }
    }

    const giveBack = (workspaceId: string) => {
      running -= 1
      const left = runningOf(workspaceId) - 1
      if (left === 0) runningBy.delete(workspaceId)
      else runningBy.set(workspaceId, left)
      admitWaiting()
    }

    const leaveQueue = (waiter: Waiter) => {
      const queue = queues.get(waiter.workspaceId)
      if (queue === undefined) return
      const index = queue.indexOf(waiter)
      if (index !== -1) queue.splice(index, 1)
      if (queue.length === 0) queues.delete(waiter.workspaceId)
    }

    /** Who held the slots when the wait ran out. */
    const timedOut = (workspaceId: string) => () =>
      runningOf(workspaceId) >= limits.perWorkspace
        ? new ExportQueueTimeout({ heldBy: "workspace", limit: limits.perWorkspace, waitedMs: limits.maxWaitMs })
        : new ExportQueueTimeout({ heldBy: "instance", limit: limits.perInstance, waitedMs: limits.maxWaitMs })

    const withSlot = (workspaceId: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | ExportQueueTimeout, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const release = Effect.sync(() => giveBack(workspaceId))
          if (mayStart(workspaceId)) {
            take(workspaceId)
            return yield* Effect.ensuring(restore(self), release)
          }
          const waiter: Waiter = { workspaceId, admitted: yield* Deferred.make<void>(), granted: false }
          const queue = queues.get(workspaceId)
          if (queue === undefined) queues.set(workspaceId, [waiter])
          else queue.push(waiter)
          yield* restore(
            Deferred.await(waiter.admitted).pipe(
              Effect.timeoutFail({ duration: Duration.millis(limits.maxWaitMs), onTimeout: timedOut(workspaceId) })
            )
          ).pipe(
            // Timed out or interrupted: out of the queue, or the slot back if it was given meanwhile.
            Effect.onExit((exit) =>
              Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => waiter.granted ? giveBack(workspaceId) : leaveQueue(waiter)))
          )
          return yield* Effect.ensuring(restore(self), release)
        })
      )

    const counts = () => {
      let waiting = 0
      for (const queue of queues.values()) waiting += queue.length
      return { running, waiting }
    }

    return { withSlot, counts }
  })
