import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { Readiness } from "../../src/platform/Readiness"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { makeTestLayer } from "./makeTestLayer"

describe("makeTestLayer", () => {
  it.effect("serves the given members and lets any other die, naming it", () =>
    Effect.gen(function*() {
      const ready = yield* Effect.flatMap(Readiness, (r) => r.ready).pipe(
        Effect.provide(makeTestLayer(Readiness)({ ready: Effect.succeed(7) }))
      )
      expect(ready).toBe(7)
      // An effect member and a method member, neither given.
      const alive = yield* Effect.exit(Effect.flatMap(Readiness, (r) => r.alive).pipe(Effect.provide(makeTestLayer(Readiness)({}))))
      const get = yield* Effect.exit(Effect.flatMap(Workspaces, (w) => w.get("x")).pipe(Effect.provide(makeTestLayer(Workspaces)({}))))
      const cases: ReadonlyArray<readonly [Exit.Exit<unknown, unknown>, string]> = [[alive, "Readiness.alive"], [get, "Workspaces.get"]]
      for (const [exit, name] of cases) {
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toContain(`${name} is not implemented`)
      }
    }))
})
