import { expect, type Vitest } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { type WorkspacePage, Workspaces } from "../../src/services/workspaces/Workspaces"

/** A name no other test of the suite uses, so the cases can share one store. */
export const uniqueName = (prefix: string) => `${prefix} ${crypto.randomBytes(4).toString("hex")}`

/** The behaviour both backings of Workspaces must show (real clock: the database keeps its own time). */
export const workspacesContract = (it: Vitest.MethodsNonLive<Workspaces, true>) => {
  it.effect("creates a workspace with default settings and finds it by id", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const created = yield* workspaces.create(uniqueName("Acme"), {})
      expect(created.id).toMatch(/^[0-9a-f-]{36}$/)
      expect(yield* workspaces.get(created.id)).toEqual(created)
      expect((yield* Effect.flip(workspaces.get(crypto.randomUUID())))._tag).toBe("WorkspaceNotFound")
      // An id that cannot exist is "not found", not a storage failure.
      expect((yield* Effect.flip(workspaces.get("not-a-uuid")))._tag).toBe("WorkspaceNotFound")
    }))

  it.effect("lists newest first in pages whose cursors continue without gaps or repeats", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const prefix = uniqueName("Paged")
      const created = []
      for (let i = 0; i < 5; i++) created.push(yield* workspaces.create(`${prefix} ${i}`, {}))
      const pages: Array<WorkspacePage> = []
      let cursor: string | undefined
      do {
        const page: WorkspacePage = yield* workspaces.list({ search: prefix, limit: 2, cursor })
        pages.push(page)
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined && pages.length < 10)
      expect(pages.map((page) => page.data.length)).toEqual([2, 2, 1])
      expect(pages.flatMap((page) => page.data.map((w) => w.id))).toEqual(created.map((w) => w.id).reverse())
      // A page that ends exactly at the last workspace has no next cursor.
      expect((yield* workspaces.list({ search: prefix, limit: 5 })).nextCursor).toBeNull()
      // A cursor that is not one of ours starts from the beginning.
      const garbled = yield* workspaces.list({ search: prefix, limit: 1, cursor: "garbage" })
      expect(garbled.data[0]!.id).toBe(created[4]!.id)
    }))

  it.effect("searches names case-insensitively, literally, or a whole id", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const tag = crypto.randomBytes(4).toString("hex")
      const plain = yield* workspaces.create(`Northwind ${tag}`, {})
      const percent = yield* workspaces.create(`Rate 100% ${tag}`, {})
      const ids = (page: WorkspacePage) => page.data.map((w) => w.id)
      expect(ids(yield* workspaces.list({ search: `NORTHWIND ${tag.toUpperCase()}`, limit: 10 }))).toEqual([plain.id])
      // % and _ are characters of the name, not wildcards.
      expect(ids(yield* workspaces.list({ search: `% ${tag}`, limit: 10 }))).toEqual([percent.id])
      expect(ids(yield* workspaces.list({ search: `_ate`, limit: 10 }))).toEqual([])
      expect(ids(yield* workspaces.list({ search: ` ${plain.id} `, limit: 10 }))).toEqual([plain.id])
    }))

  it.effect("updates the name and merges a settings patch into the stored settings", () =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const created = yield* workspaces.create(uniqueName("Before"), { timezone: "Europe/Paris" })
      const renamed = yield* workspaces.updateSettings(created.id, { name: "After" })
      expect(renamed.name).toBe("After")
      expect(renamed.settings).toEqual(created.settings)
      const patched = yield* workspaces.updateSettings(created.id, { settings: { anonymizeUsers: true } })
      expect(patched.settings).toEqual({ ...created.settings, anonymizeUsers: true })
      expect(yield* workspaces.get(created.id)).toEqual(patched)
      expect((yield* Effect.flip(workspaces.updateSettings(crypto.randomUUID(), { name: "x" })))._tag).toBe("WorkspaceNotFound")
    }))
}
