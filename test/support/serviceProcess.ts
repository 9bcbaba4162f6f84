import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { builtEntry } from "./builtService"

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
export const waitForOk = async (url: string, timeoutMs = 60_000): Promise<void> => {
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
