import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { LargeBodies, type ReleaseLargeBodySlot, withLargeBodySlot } from "../../../src/services/forwarding/LargeBodies"

const limits = { reading: 2, waiting: 2, perWorkspace: 3 }

/**
 * Asks for a slot and holds it until `done` is completed; `started` once it has its slot. Returns once the request
 * is in (reading or in line: its fiber runs on until it waits, before this one resumes).
 */
const holding = (bodies: LargeBodies["Type"], workspaceId: string) =>
  Effect.gen(function*() {
    const asked = yield* Deferred.make<void>()
    const started = yield* Deferred.make<void>()
    const done = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(Effect.zipRight(
      Deferred.succeed(asked, undefined),
      withLargeBodySlot(bodies, workspaceId, () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(done)))
    ))
    yield* Deferred.await(asked)
    return { started, done, fiber }
  })

/** Time for a request that could start to start: only to show that one does not. */
const aWhile = Effect.sleep("30 millis")

describe("large bodies read a few at a time", () => {
  it.live("reads two at once; the others wait their turn, first come first served", () =>
    Effect.gen(function*() {
      const bodies = yield* LargeBodies
      const [a, b, c] = [yield* holding(bodies, "w1"), yield* holding(bodies, "w2"), yield* holding(bodies, "w3")]
      yield* Deferred.await(a.started)
      yield* Deferred.await(b.started)
      yield* aWhile
      expect(yield* Deferred.isDone(c.started)).toBe(false)
      yield* Deferred.succeed(a.done, undefined)
      yield* Deferred.await(c.started)
      yield* Deferred.succeed(b.done, undefined)
      yield* Deferred.succeed(c.done, undefined)
      yield* Fiber.joinAll([a.fiber, b.fiber, c.fiber])
    }).pipe(Effect.provide(LargeBodies.layerWith(limits))))

  it.live("refuses beyond the waiting room (instance) and beyond a workspace's share, and not another workspace", () =>
    Effect.gen(function*() {
      const bodies = yield* LargeBodies
      const held = [yield* holding(bodies, "busy"), yield* holding(bodies, "busy"), yield* holding(bodies, "busy")]
      const share = yield* Effect.flip(withLargeBodySlot(bodies, "busy", () => Effect.void))
      expect(share).toMatchObject({ _tag: "LargeBodiesBusy", scope: "workspace", limit: 3 })
      const other = yield* holding(bodies, "other")
      const full = yield* Effect.flip(withLargeBodySlot(bodies, "third", () => Effect.void))
      expect(full).toMatchObject({ _tag: "LargeBodiesBusy", scope: "instance", limit: 4 })
      for (const { done } of [...held, other]) yield* Deferred.succeed(done, undefined)
      yield* Fiber.joinAll([...held, other].map(({ fiber }) => fiber))
      // Everything left: all the room is free again.
      yield* Effect.all(Array.from({ length: 3 }, () => withLargeBodySlot(bodies, "busy", () => Effect.void)), { concurrency: "unbounded" })
    }).pipe(Effect.provide(LargeBodies.layerWith(limits))))

  it.live("gives the slot to the next as soon as the body goes upstream, before the request ends", () =>
    Effect.gen(function*() {
      const bodies = yield* LargeBodies
      const upstream = yield* Deferred.make<void>()
      let released: ReleaseLargeBodySlot = Effect.void
      const goesUpstream = (release: ReleaseLargeBodySlot) => {
        released = release
        return Effect.zipRight(release, Deferred.await(upstream))
      }
      // One slot, no waiting room: the second is read only because the first went upstream.
      const first = yield* Effect.fork(withLargeBodySlot(bodies, "w", goesUpstream))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(withLargeBodySlot(bodies, "w", goesUpstream))
      yield* Effect.yieldNow()
      // Both went upstream and hold no slot: a third is read at once, though both still run.
      yield* withLargeBodySlot(bodies, "w", () => Effect.void)
      expect(first.unsafePoll()).toBeNull()
      yield* Deferred.succeed(upstream, undefined)
      yield* Fiber.joinAll([first, second])
      // Once the work ended, releasing again does nothing: the room is one body still.
      yield* released
      const held = yield* holding(bodies, "w")
      expect((yield* Effect.flip(withLargeBodySlot(bodies, "w", () => Effect.void)))._tag).toBe("LargeBodiesBusy")
      yield* Deferred.succeed(held.done, undefined)
      yield* Fiber.join(held.fiber)
    }).pipe(Effect.provide(LargeBodies.layerWith({ reading: 1, waiting: 0, perWorkspace: 3 }))))

  it.live("a request that leaves while waiting leaves the line", () =>
    Effect.gen(function*() {
      const bodies = yield* LargeBodies
      const held = [yield* holding(bodies, "a"), yield* holding(bodies, "b")]
      const waiting = [yield* holding(bodies, "c"), yield* holding(bodies, "d")]
      expect((yield* Effect.flip(withLargeBodySlot(bodies, "e", () => Effect.void)))._tag).toBe("LargeBodiesBusy")
      yield* Fiber.interrupt(waiting[0]!.fiber)
      const next = yield* holding(bodies, "e")
      yield* Deferred.succeed(held[0]!.done, undefined)
      // d was first in line, then e.
      yield* Deferred.await(waiting[1]!.started)
      yield* aWhile
      expect(yield* Deferred.isDone(next.started)).toBe(false)
      yield* Deferred.succeed(held[1]!.done, undefined)
      yield* Deferred.await(next.started)
      for (const { done } of [waiting[1]!, next]) yield* Deferred.succeed(done, undefined)
      yield* Fiber.joinAll([held[0]!.fiber, held[1]!.fiber, waiting[1]!.fiber, next.fiber])
    }).pipe(Effect.provide(LargeBodies.layerWith(limits))))
})
