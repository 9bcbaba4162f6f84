import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { builtEntry } from "./builtService"
import { freshDatabaseUrl } from "./database"
import { tempDir } from "./tempDirs"

const root = path.resolve(import.meta.dirname, "../..")

export interface ServiceProcess {
  readonly child: ChildProcess
  readonly output: () => { readonly stdout: string; readonly stderr: string }
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>
}

/** Runs the built service (built by the global setup) with `npm start`'s flags and the given environment. */
export const spawnService = (env: Record<string, string>): ServiceProcess => {
  const child = spawn(process.execPath, builtEntry("main"), {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => ({ stdout, stderr }), exited }
}

/** Polls a URL until it answers 200, or fails after the timeout. */
export const waitForOk = async (url: string, timeoutMs = 120_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
}

/**
 * The built service on a free loopback port, with a data folder and a database of its own (`name` names both and
 * the admin token), once it answers /readyz: for tests that need a process of its own and nothing else set up.
 */
export const startBuiltService = async (
  name: string,
  env: Record<string, string> = {}
): Promise<{ readonly service: ServiceProcess; readonly port: number }> => {
  const port = await Effect.runPromise(freePort)
  const service = spawnService({
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: tempDir(`ws-${name}-`),
    DATABASE_URL: await freshDatabaseUrl(),
    ADMIN_TOKEN: `${name}-admin-token-0123456789`,
    ...env
  })
  await waitForOk(`http://127.0.0.1:${port}/readyz`)
  return { service, port }
}
