import { expect, type Vitest } from "@effect/vitest"
import { Effect } from "effect"
import { latestMigrationId } from "../../src/platform/Migrations"
import { Readiness } from "../../src/platform/Readiness"

/** Both backings of Readiness, when all is well: alive, and ready at the latest migration. */
export const readinessContract = (it: Vitest.MethodsNonLive<Readiness, true>) => {
  it.effect("is alive and ready at the latest migration", () =>
    Effect.gen(function*() {
      const readiness = yield* Readiness
      yield* readiness.alive
      expect(yield* readiness.ready).toBe(latestMigrationId())
    }))
}
