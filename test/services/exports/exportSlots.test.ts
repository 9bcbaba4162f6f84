/**
 * The export slots on their own: who runs, who waits, in what order a freed slot is given, and what a wait
 * that runs out says. Exports are stand-ins held open by latches the test opens, never timed; the wait's
 * deadline runs on the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import { type ExportSlotLimits, type ExportSlots, makeExportSlots } from "../../../src/services/exports/ExportService/exportSlots"

const limits = (overrides: Partial<ExportSlotLimits> = {}): ExportSlotLimits => ({
  perInstance: 4,
  perWorkspace: 2,
  maxWaitMs: 60_000,
  ...overrides
})

/** Lets forked fibers run as far as they can (no timer involved): for checking that something did NOT start. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

/** Stand-in exports that record when they start and run until the test lets them finish. */
const harness = (slots: ExportSlots) =>
  Effect.sync(() => {
    const started: Array<string> = []
    const start = (workspaceId: string, name: string) =>
      Effect.gen(function*() {
        const finish = yield* Deferred.make<void>()
        const began = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          slots.withSlot(workspaceId)(
            Effect.zipRight(Effect.sync(() => started.push(name)), Effect.zipRight(Deferred.succeed(began, undefined), Deferred.await(finish)))
          )
        )
        return { fiber, began, finish: Deferred.succeed(finish, undefined), name }
      })
    return { started, start }
  })

describe("export slots", () => {
  it.effect("run at most EXPORT_CONCURRENCY_PER_WORKSPACE of one workspace: another's export runs while its others wait", () =>
    Effect.gen(function*() {
      const slots = yield* makeExportSlots(limits())
      const { start, started } = yield* harness(slots)
      const heavy = yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => `a${i + 1}`), (name) => start("A", name))
      yield* settle
      expect(started).toEqual(["a1", "a2"])
      expect(slots.counts()).toEqual({ running: 2, waiting: 6 })

      // B's one export is not queued behind A's six: it runs, and ends, while all of A's are held.
      const light = yield* start("B", "b1")
      yield* Deferred.await(light.began)
      yield* light.finish
      expect(Exit.isSuccess(yield* Fiber.await(light.fiber))).toBe(true)
      expect(started).toEqual(["a1", "a2", "b1"])

      // A's next starts only when one of its own ends: never more than two at once.
      yield* heavy[0]!.finish
      yield* Deferred.await(heavy[2]!.began)
      yield* settle
      expect(started).toEqual(["a1", "a2", "b1", "a3"])
      for (const job of heavy) yield* job.finish
      for (const job of heavy) expect(Exit.isSuccess(yield* Fiber.await(job.fiber))).toBe(true)
      expect(started).toHaveLength(9)
      expect(slots.counts()).toEqual({ running: 0, waiting: 0 })
    }))

  it.effect("run at most the instance's limit in all", () =>
    Effect.gen(function*() {
      const slots = yield* makeExportSlots(limits({ perInstance: 3, perWorkspace: 2 }))
      const { start, started } = yield* harness(slots)
      const jobs = yield* Effect.forEach(["A", "B", "C"], (workspace) =>
        Effect.forEach([1, 2], (n) => start(workspace, `${workspace.toLowerCase()}${n}`)))
      yield* settle
      expect(started).toEqual(["a1", "a2", "b1"])
      expect(slots.counts()).toEqual({ running: 3, waiting: 3 })
      for (const job of jobs.flat()) yield* job.finish
      for (const job of jobs.flat()) yield* Fiber.join(job.fiber)
      expect([...started].sort()).toEqual(["a1", "a2", "b1", "b2", "c1", "c2"])
    }))

  it.effect("give a freed slot to the waiting workspace with the fewest running, equals in turn (round robin)", () =>
    Effect.gen(function*() {
      const slots = yield* makeExportSlots(limits({ perInstance: 2, perWorkspace: 2 }))
      const { start, started } = yield* harness(slots)
      const [d1, d2] = yield* Effect.forEach(["d1", "d2"], (name) => start("D", name))
      const [a1, a2] = yield* Effect.forEach(["a1", "a2"], (name) => start("A", name))
      const [b1, b2] = yield* Effect.forEach(["b1", "b2"], (name) => start("B", name))
      yield* settle
      expect(started).toEqual(["d1", "d2"])
      // A and B run none: A queued first, so A's turn; then B runs none and A one: B's.
      yield* d1!.finish
      yield* Deferred.await(a1!.began)
      yield* d2!.finish
      yield* Deferred.await(b1!.began)
      yield* settle
      // In arrival order it would be a1, a2, b1, b2: A's second would have gone before B's first.
      expect(started).toEqual(["d1", "d2", "a1", "b1"])
      yield* a1!.finish
      yield* Deferred.await(a2!.began)
      yield* b1!.finish
      yield* Deferred.await(b2!.began)
      expect(started).toEqual(["d1", "d2", "a1", "b1", "a2", "b2"])
      for (const job of [a2!, b2!]) yield* job.finish
    }))

  it.effect("answer a wait that runs out with who held the slots, and take it out of the queue", () =>
    Effect.gen(function*() {
      const slots = yield* makeExportSlots(limits({ perInstance: 2, perWorkspace: 1, maxWaitMs: 30_000 }))
      const { start } = yield* harness(slots)
      const a1 = yield* start("A", "a1")
      const a2 = yield* start("A", "a2")
      const c1 = yield* start("C", "c1")
      const b1 = yield* start("B", "b1")
      yield* settle
      expect(slots.counts()).toEqual({ running: 2, waiting: 2 })
      yield* TestClock.adjust("29 seconds")
      expect(slots.counts()).toEqual({ running: 2, waiting: 2 })
      yield* TestClock.adjust("1 second")
      // A's own export held A's one slot; C's and A's held the instance's two.
      expect(yield* Effect.flip(Fiber.join(a2.fiber))).toEqual(expect.objectContaining({ _tag: "ExportQueueTimeout", heldBy: "workspace", limit: 1, waitedMs: 30_000 }))
      expect(yield* Effect.flip(Fiber.join(b1.fiber))).toEqual(expect.objectContaining({ _tag: "ExportQueueTimeout", heldBy: "instance", limit: 2 }))
      expect(slots.counts()).toEqual({ running: 2, waiting: 0 })
      yield* a1.finish
      yield* c1.finish
      yield* Fiber.join(a1.fiber)
      yield* Fiber.join(c1.fiber)
      expect(slots.counts()).toEqual({ running: 0, waiting: 0 })
    }))

  it.effect("give the slot back when an export fails or is interrupted, and forget an interrupted wait", () =>
    Effect.gen(function*() {
      const slots = yield* makeExportSlots(limits({ perInstance: 1, perWorkspace: 1 }))
      const { start, started } = yield* harness(slots)
      expect(yield* Effect.flip(slots.withSlot("A")(Effect.fail("broken" as const)))).toBe("broken")
      const a1 = yield* start("A", "a1")
      const waiting = yield* start("B", "b1")
      yield* settle
      expect(slots.counts()).toEqual({ running: 1, waiting: 1 })
      // The client of the waiting export went away.
      yield* Fiber.interrupt(waiting.fiber)
      expect(slots.counts()).toEqual({ running: 1, waiting: 0 })
      // The running one is interrupted: its slot goes to the next.
      const next = yield* start("C", "c1")
      yield* Fiber.interrupt(a1.fiber)
      yield* Deferred.await(next.began)
      expect(started).toEqual(["a1", "c1"])
      yield* next.finish
      yield* Fiber.join(next.fiber)
      expect(slots.counts()).toEqual({ running: 0, waiting: 0 })
    }))
})
