import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { UsageLedger } from "../../src/services/usage/3-UsageLedger/index"
import { gatedLedger, LedgerGate } from "../support/gatedLedger"
import { type MemoryApp, startApp, call, createKey, createWorkspace } from "../support/app"
import { datePoint, ingest, message } from "../support/usage"

const january = { from: datePoint("2026-01-05T00:00:00", "UTC"), to: datePoint("2026-01-07T00:00:00", "UTC") }

// What a client of the export endpoint meets when no slot comes free in time, on the in-memory app with
// export reads held open by the test (never timed): the spec's JSON error, with retry-after.
describe("exports waiting for a slot", () => {
  let app: MemoryApp
  let gate: LedgerGate["Type"]
  const scope = Effect.runSync(Scope.make())

  beforeAll(async () => {
    const ledger = await Effect.runPromise(Layer.buildWithScope(gatedLedger.pipe(Layer.provideMerge(UsageLedger.memory)), scope))
    gate = Context.get(ledger, LedgerGate)
    app = await startApp(
      { EXPORT_CONCURRENCY_PER_WORKSPACE: "1", EXPORT_QUEUE_TIMEOUT_MS: "300" },
      { overrides: Layer.succeedContext(ledger) }
    )
  })
  afterAll(async () => {
    await app?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /** A workspace with one user-day of activity and an export key. */
  const exporter = async () => {
    const workspace = await createWorkspace(app)
    await ingest(app, workspace.id, [message(`m-${workspace.id}`, "2026-01-05T10:00:00Z", { user: { id: "u1" } })])
    const { key } = await createKey(app, workspace.id, ["USAGE_EXPORT_API"])
    return { id: workspace.id, run: () => call(app, "POST", "/export/users", { token: key, body: january }) }
  }

  it("answers 429 too_many_concurrent_exports when the workspace's own exports hold its slots, then runs them", async () => {
    const workspace = await exporter()
    await Effect.runPromise(gate.hold(workspace.id))
    const first = workspace.run()
    await vi.waitFor(() => expect(gate.reads(workspace.id).open).toBe(1))
    const second = await workspace.run()
    expect(second.status).toBe(429)
    expect(second.headers.get("retry-after")).toBe("10")
    expect(second.body).toEqual({
      success: false,
      error: { code: "too_many_concurrent_exports", message: expect.stringContaining("already runs 1 exports at once") }
    })
    await Effect.runPromise(gate.release)
    expect((await first).status).toBe(200)
    expect((await workspace.run()).status).toBe(200)
  })

  it("answers 503 exports_busy when other workspaces' exports hold every slot of the instance", async () => {
    const busy = await Promise.all(Array.from({ length: 4 }, () => exporter()))
    const other = await exporter()
    for (const workspace of busy) await Effect.runPromise(gate.hold(workspace.id))
    const running = busy.map((workspace) => workspace.run())
    await vi.waitFor(() => expect(busy.map((workspace) => gate.reads(workspace.id).open)).toEqual([1, 1, 1, 1]))
    const refused = await other.run()
    expect(refused.status).toBe(503)
    expect(refused.headers.get("retry-after")).toBe("10")
    expect(refused.body).toEqual({
      success: false,
      error: { code: "exports_busy", message: expect.stringContaining("running 4 exports, the most it runs at once") }
    })
    await Effect.runPromise(gate.release)
    expect((await Promise.all(running)).map((answer) => answer.status)).toEqual([200, 200, 200, 200])
    expect((await other.run()).status).toBe(200)
  })
})
