import { type ChildProcess, spawn } from "node:child_process"
import { Effect } from "effect"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { tempDir } from "./tempDirs"

export interface RedisServer {
  readonly url: string
  readonly port: number
  /** Stops the server (to test what happens while Redis is away); `start` brings it back on the same port. */
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
}

/** A real redis-server on a free loopback port (`npm test` installs it when missing: scripts/testPrerequisites.mjs). */
export const startRedis = async (): Promise<RedisServer> => {
  const port = await Effect.runPromise(freePort)
  const dir = tempDir("ws-redis-")
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    await new Promise<void>((resolve, reject) => {
      let output = ""
      child!.once("error", reject)
      child!.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes("Ready to accept connections")) resolve()
      })
      child!.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)))
    })
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      // A killed process has a signal code and no exit code: stopped already either way.
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGKILL")
    })
  await start()
  return { url: `redis://127.0.0.1:${port}`, port, stop, start }
}
