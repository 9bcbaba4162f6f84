import { describe, expect, it } from "vitest"
import { call, createWorkspace, testAdminToken, useApp } from "../support/app"

describe("admin API: unknown settings keys", () => {
  const app = useApp({}, { stores: "postgres" })

  const settingsOf = async (id: string) =>
    (await call(app.current, "GET", `/admin/workspaces/${id}`, { token: testAdminToken })).body.settings

  it("refuses a typo at any level with 400 naming the field, and stores nothing", async () => {
    const created = await createWorkspace(app.current, "Typos", {
      byokModels: { provider_a: ["my-model"] },
      rateLimits: { families: { chat_completions: { requestsPerMinute: 5 } } }
    })
    const before = await settingsOf(created.id)

    const typos: ReadonlyArray<readonly [unknown, string]> = [
      [{ settings: { rateLimits: { family: { chat_completions: { requestsPerMinute: 1 } } } } }, "settings.rateLimits.family"],
      [{ settings: { byokModels: { providerA: ["x"] } } }, "settings.byokModels.providerA"],
      [{ settings: { anonymiseUsers: true } }, "settings.anonymiseUsers"],
      [
        { settings: { rateLimits: { families: { chat_completions: { requestPerMinute: 1 } } } } },
        "settings.rateLimits.families.chat_completions.requestPerMinute"
      ],
      [{ settings: { rateLimits: { families: { chat: { requestsPerMinute: 1 } } } } }, "settings.rateLimits.families.chat"],
      [{ setings: { anonymizeUsers: true } }, "setings"]
    ]
    for (const [body, field] of typos) {
      const response = await call(app.current, "PATCH", `/admin/workspaces/${created.id}`, { token: testAdminToken, body })
      expect(response.status, field).toBe(400)
      expect(response.body.error).toMatchObject({ code: "invalid_value", field, message: expect.stringContaining(`Unknown parameter: '${field}'`) })
    }
    expect(await settingsOf(created.id)).toEqual(before)

    const onCreate = await call(app.current, "POST", "/admin/workspaces", {
      token: testAdminToken,
      body: { name: "x", settings: { byokModels: { provider_d: [] } } }
    })
    expect(onCreate.status).toBe(400)
    expect(onCreate.body.error.field).toBe("settings.byokModels.provider_d")
  })

  it("still accepts per-model limits under any model name", async () => {
    const created = await createWorkspace(app.current)
    const response = await call(app.current, "PATCH", `/admin/workspaces/${created.id}`, {
      token: testAdminToken,
      body: { settings: { rateLimits: { models: { "any-model": { tokensPerMinute: 100 } } } } }
    })
    expect(response.status).toBe(200)
    expect(response.body.settings.rateLimits).toEqual({ models: { "any-model": { tokensPerMinute: 100 } } })
  })
})
