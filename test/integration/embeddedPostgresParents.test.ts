import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Either, Option, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bindingFor, blockingParent, ownerFileOf, startEmbeddedPostgres } from "../../src/platform/EmbeddedPostgres"

const isRoot = process.getuid?.() === 0
const made: Array<string> = []

/** A folder like /root: 0700, owned by root, so the postgres user cannot pass through it. */
const closedFolder = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-closed-parent-"))
  fs.chmodSync(dir, 0o700)
  made.push(dir)
  return dir
}

/** Whether this test's own binding of the cluster is mounted (another process's mounts are not ours to judge). */
const bound = (directory: string): boolean =>
  fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").some((line) => line.split(" ")[4] === bindingFor(directory))

/** Starts the cluster, runs one query and stops it again. */
const withCluster = <A>(directory: string, query: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.either(
      startEmbeddedPostgres({ directory, password: Redacted.make("parents-test"), settings: { fsync: "off" } }).pipe(
        Effect.flatMap(({ url }) =>
          Effect.flatMap(SqlClient.SqlClient, query).pipe(Effect.provide(PgClient.layer({ url })))
        ),
        Effect.scoped
      )
    )
  )

afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
})

describe("embedded PostgreSQL under a parent the postgres user cannot pass", () => {
  it("finds the first folder that keeps a user out", () => {
    const closed = closedFolder()
    expect(blockingParent(path.join(closed, "data", "postgres"), Option.none())).toEqual(Option.some(closed))
    expect(blockingParent(path.join(os.tmpdir(), "x", "postgres"), Option.none())).toEqual(Option.none())
  })

  it.skipIf(!isRoot)("keeps the cluster in DATA_DIR, every row across a restart, and the parent's mode", async () => {
    const closed = closedFolder()
    const directory = path.join(closed, "data", "postgres")
    const first = await withCluster(directory, (sql) =>
      sql`CREATE TABLE kept (v text)`.pipe(Effect.zipRight(sql`INSERT INTO kept VALUES ('row')`)))
    if (Either.isLeft(first)) {
      // Without the right to mount (an unprivileged container) the service must say what to do instead.
      expect(String((first.left as { message?: string }).message)).toMatch(
        new RegExp(`cannot pass through ${closed} \\(mode 0700\\).*Set DATA_DIR to a folder`)
      )
      return
    }
    expect(fs.existsSync(path.join(directory, "PG_VERSION"))).toBe(true)
    expect(bound(directory)).toBe(false)
    const second = await withCluster(directory, (sql) => sql<{ v: string }>`SELECT v FROM kept`)
    expect(second).toEqual(Either.right([{ v: "row" }]))
    expect(fs.statSync(closed).mode & 0o777).toBe(0o700)
    expect(bound(directory)).toBe(false)
  }, 120_000)

  it.skipIf(!isRoot)("stops with one line naming DATA_DIR, the blocking parent and what to do when no binding is possible", async () => {
    const closed = closedFolder()
    const tmpdir = process.env.TMPDIR
    // The binding goes under the temporary folder: one the postgres user cannot reach either.
    process.env.TMPDIR = closedFolder()
    const result = await withCluster(path.join(closed, "data", "postgres"), () => Effect.void).finally(() => {
      if (tmpdir === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = tmpdir
    })
    expect(Either.isLeft(result)).toBe(true)
    const message = String(Either.isLeft(result) ? (result.left as { message?: string }).message : "")
    expect(message).toMatch(new RegExp(`^DATA_DIR cannot hold the embedded PostgreSQL cluster ${closed}/data/postgres: `))
    expect(message).toContain(`cannot pass through ${closed} (mode 0700)`)
    expect(message).toMatch(/Set DATA_DIR to a folder whose parents every user can pass through .* or set DATABASE_URL\.$/)
    expect(message).not.toContain("\n")
  })

  it.skipIf(!isRoot)("undoes the binding and the ownership when the server fails to start, with one line saying why", async () => {
    const directory = path.join(closedFolder(), "data", "postgres")
    const result = await Effect.runPromise(Effect.either(Effect.scoped(
      startEmbeddedPostgres({ directory, password: Redacted.make("parents-test"), settings: { no_such_setting: "1" } })
    )))
    expect(Either.isLeft(result)).toBe(true)
    const message = Either.isLeft(result) ? result.left.message : ""
    expect(message).toMatch(/^embedded PostgreSQL did not start in .*no_such_setting/)
    expect(message).not.toContain("\n")
    expect(bound(directory)).toBe(false)
    expect(fs.existsSync(ownerFileOf(directory))).toBe(false)
  }, 120_000)

  it.skipIf(!isRoot)("removes a stale binding of ours (its cluster folder deleted) at the next start", async () => {
    // What a killed test run leaves: a binding whose cluster folder was deleted afterwards.
    const gone = path.join(closedFolder(), "gone", "postgres")
    fs.mkdirSync(gone, { recursive: true })
    fs.mkdirSync(bindingFor(gone))
    try {
      execFileSync("mount", ["--bind", gone, bindingFor(gone)])
    } catch {
      return // No right to mount here: nothing of ours can be left either.
    }
    fs.rmSync(path.dirname(gone), { recursive: true })
    expect(bound(gone)).toBe(true)
    const result = await withCluster(path.join(closedFolder(), "data", "postgres"), (sql) => sql`SELECT 1`)
    expect(Either.isRight(result)).toBe(true)
    expect(bound(gone)).toBe(false)
    expect(fs.existsSync(bindingFor(gone))).toBe(false)
  }, 120_000)
})
