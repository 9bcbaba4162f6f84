import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const adminToken = "bench-admin-token-0123456789"

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** A /proc/<pid>/status field (kB) in MB. */
const statusMb = (pid: number, field: "VmHWM" | "VmRSS"): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
  return match ? Number(match[1]) / 1024 : Number.NaN
}

export interface ExportAnswer {
  readonly data: { readonly filePath: string; readonly recordCount: number }
}

export interface BenchService {
  readonly dataDir: string
  /** http://127.0.0.1:PORT */
  readonly base: string
  readonly pid: number
  readonly request: (method: string, route: string, body: unknown, token?: string) => Promise<unknown>
  readonly exportUsers: (key: string, body: unknown) => Promise<ExportAnswer>
  /** Resets the peak RSS (VmHWM) to the current RSS, which it returns in MB. */
  readonly resetPeakRss: () => number
  readonly peakRssMb: () => number
  readonly rssMb: () => number
  readonly stop: () => Promise<void>
}

/** Starts the service as its own process and waits until it is ready. */
export const startService = async (options: {
  readonly command: ReadonlyArray<string>
  readonly databaseUrl: string
  readonly dataDir: string
  readonly nodeOptions?: string
  /** Another checkout of the service to run (its own dist/), for before/after figures; default this one. */
  readonly cwd?: string
  readonly env?: Readonly<Record<string, string>>
}): Promise<BenchService> => {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [...options.command], {
    cwd: options.cwd ?? root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/root",
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_URL: options.databaseUrl,
      DATA_DIR: options.dataDir,
      ADMIN_TOKEN: adminToken,
      PRICE_TABLE_FILE: path.join(root, "config/prices.json"),
      LOG_LEVEL: "warning",
      ...(options.nodeOptions ? { NODE_OPTIONS: options.nodeOptions } : {}),
      ...options.env
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    const ready = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false)
    if (ready) break
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the service (${options.command.join(" ")}) did not become ready`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const pid = child.pid ?? 0
  const request = async (method: string, route: string, body: unknown, token = adminToken): Promise<unknown> => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
    const answer: unknown = await response.json()
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(answer)}`)
    return answer
  }
  return {
    dataDir: options.dataDir,
    base,
    pid,
    request,
    exportUsers: async (key, body) => (await request("POST", "/export/users", body, key)) as ExportAnswer,
    resetPeakRss: () => {
      // Linux: writing 5 to clear_refs resets the process's peak resident set size to the current one.
      fs.writeFileSync(`/proc/${pid}/clear_refs`, "5")
      return statusMb(pid, "VmRSS")
    },
    peakRssMb: () => statusMb(pid, "VmHWM"),
    rssMb: () => statusMb(pid, "VmRSS"),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      })
  }
}
