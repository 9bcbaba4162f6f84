import { expect, type Vitest } from "@effect/vitest"
import { Effect } from "effect"
import { AuditLog, type AuditPage } from "../../src/services/workspaces/AuditLog"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { uniqueName } from "./workspaces"

/** The behaviour both backings of AuditLog must show. */
export const auditLogContract = (it: Vitest.MethodsNonLive<AuditLog | Workspaces, true>) => {
  const workspace = Effect.flatMap(Workspaces, (workspaces) => workspaces.create(uniqueName("Audited"), {}))

  it.effect("records one row per workspace concerned and lists a workspace's rows newest first", () =>
    Effect.gen(function*() {
      const audit = yield* AuditLog
      const a = yield* workspace
      const b = yield* workspace
      const before = Date.now()
      yield* audit.record({ workspaceIds: [a.id], actor: "operator", action: "workspace.created", target: a.id, address: "10.0.0.1" })
      yield* audit.record({ workspaceIds: [a.id, b.id], actor: "ada@example.com", action: "session.signed_in", target: null, address: null })
      // Concerning no workspace (an unknown email): in no workspace's list.
      yield* audit.record({ workspaceIds: [], actor: "who@example.com", action: "session.sign_in_failed", target: null, address: "10.0.0.2" })
      const listed = yield* audit.list(a.id, { limit: 10 })
      expect(listed.nextCursor).toBeNull()
      expect(listed.data.map(({ action, actor, address, target }) => ({ action, actor, address, target }))).toEqual([
        { action: "session.signed_in", actor: "ada@example.com", address: null, target: null },
        { action: "workspace.created", actor: "operator", address: "10.0.0.1", target: a.id }
      ])
      expect(listed.data[0]!.at.getTime()).toBeGreaterThanOrEqual(before - 1000)
      expect(Number(listed.data[0]!.id)).toBeGreaterThan(Number(listed.data[1]!.id))
      expect((yield* audit.list(b.id, { limit: 10 })).data.map((row) => row.action)).toEqual(["session.signed_in"])
    }))

  it.effect("pages by cursor and filters by action", () =>
    Effect.gen(function*() {
      const audit = yield* AuditLog
      const { id } = yield* workspace
      for (let i = 0; i < 5; i++) {
        yield* audit.record({ workspaceIds: [id], actor: "operator", action: i % 2 === 0 ? "api_key.created" : "api_key.revoked", target: String(i), address: null })
      }
      const pages: Array<AuditPage> = []
      let cursor: string | undefined
      do {
        const page: AuditPage = yield* audit.list(id, { limit: 2, cursor })
        pages.push(page)
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined && pages.length < 10)
      expect(pages.map((page) => page.data.map((row) => row.target))).toEqual([["4", "3"], ["2", "1"], ["0"]])
      expect((yield* audit.list(id, { limit: 10, action: "api_key.revoked" })).data.map((row) => row.target)).toEqual(["3", "1"])
      // A cursor that is not a row number starts from the newest row.
      expect((yield* audit.list(id, { limit: 1, cursor: "nonsense" })).data.map((row) => row.target)).toEqual(["4"])
    }))

  it.effect("walks 110 entries page by page, newest first, each once (ids past 99 sort as numbers)", () =>
    Effect.gen(function*() {
      const audit = yield* AuditLog
      const { id } = yield* workspace
      const other = yield* workspace
      for (let i = 0; i < 110; i++) {
        yield* audit.record({ workspaceIds: i % 10 === 0 ? [other.id, id] : [id], actor: "operator", action: "api_key.created", target: String(i), address: null })
      }
      const newestFirst = Array.from({ length: 110 }, (_, i) => String(109 - i))
      for (const limit of [25, 7, 110]) {
        const seen: Array<string> = []
        const times: Array<number> = []
        let cursor: string | undefined
        let pages = 0
        do {
          const page: AuditPage = yield* audit.list(id, { limit, cursor })
          expect(page.data.length, `page ${pages} of ${limit}`).toBeLessThanOrEqual(limit)
          seen.push(...page.data.map((row) => row.target ?? ""))
          times.push(...page.data.map((row) => row.at.getTime()))
          cursor = page.nextCursor ?? undefined
          pages += 1
        } while (cursor !== undefined && pages < 50)
        expect(seen, `pages of ${limit}`).toEqual(newestFirst)
        expect(pages).toBe(Math.ceil(110 / limit))
        // By time, newest first.
        expect(times).toEqual([...times].sort((a, b) => b - a))
      }
      // The other workspace's eleven rows, newest first too.
      expect((yield* audit.list(other.id, { limit: 20 })).data.map((row) => row.target)).toEqual(["100", "90", "80", "70", "60", "50", "40", "30", "20", "10", "0"])
    }))
}
