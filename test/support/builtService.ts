import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")

/** Builds dist/ as `npm start` does (only when stale); throws with the build's own messages when it fails. */
export const ensureBuilt = (): void => {
  const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: root, encoding: "utf8" })
  if (built.status !== 0) {
    throw new Error(`node scripts/build.mjs failed (exit ${built.status ?? built.signal}):\n${built.stderr}${built.stdout}`)
  }
}

/**
 * Node's flags in `npm start` (the heap settings), read from package.json's start script, so that tests and
 * benchmarks run the service exactly as users do and the settings have one home (of another checkout: its own).
 */
export const startFlagsOf = (dir: string): ReadonlyArray<string> => {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { scripts: Record<string, string> }
  const match = /exec node ((?:--\S+ )*)dist\/server\/main\.js/.exec(scripts.start ?? "")
  if (match === null) throw new Error(`${dir}: package.json's start script no longer ends in "exec node [--flags] dist/server/main.js": ${scripts.start}`)
  return match[1]!.split(" ").filter((flag) => flag !== "")
}

export const startFlags: ReadonlyArray<string> = startFlagsOf(root)

/** The node arguments of the built service, the CLI or the simulator (relative to the repository root). */
export const builtEntry = (entry: "main" | "cli" | "simulator"): Array<string> =>
  entry === "main" ? [...startFlags, "dist/server/main.js"] : [`dist/server/${entry}.js`]
