import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Readiness, Unready } from "../../src/platform/Readiness"
import { makeTestLayer } from "../support/makeTestLayer"
import { type MemoryApp, startApp, call } from "../support/app"

// The health endpoints render what Readiness says: here a stub of it, on the in-memory app.
describe("health endpoints over a Readiness that says no", () => {
  let app: MemoryApp
  beforeAll(async () => {
    app = await startApp({}, {
      overrides: makeTestLayer(Readiness)({
        alive: Effect.fail(new Unready({ reason: "the embedded PostgreSQL this service owns is not running" })),
        ready: Effect.fail(new Unready({ reason: "database at migration 3, expected 10" }))
      })
    })
  })
  afterAll(() => app.stop())

  it("answers 503 with the reason, in the NotReady shape", async () => {
    expect(await call(app, "GET", "/healthz")).toMatchObject({
      status: 503,
      body: { status: "unavailable", reason: "the embedded PostgreSQL this service owns is not running" }
    })
    const ready = await call(app, "GET", "/readyz")
    expect(ready.status).toBe(503)
    expect(ready.body).toEqual({ status: "unavailable", reason: "database at migration 3, expected 10" })
  })
})
