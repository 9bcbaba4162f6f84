// Load on loopback: wrk for requests/s and latency, a one-connection undici client for a stream's time to first byte.
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Client } from "undici"
import { cpuSeconds, processTree } from "./processes"

export interface Request {
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface WrkResult {
  readonly requests: number
  readonly rps: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
}

/** Installs wrk from Debian's packages when it is missing (as root; otherwise says how). */
export const ensureWrk = (): void => {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" })
  } catch (error) {
    // wrk --version exits 1 after printing; only a missing binary is a problem.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return
    if (process.getuid?.() !== 0) throw new Error("wrk is not installed: apt-get install -y wrk")
    try {
      execFileSync("apt-get", ["install", "-y", "wrk"], { stdio: "inherit" })
    } catch {
      // A fresh machine may not have read the package lists yet.
      execFileSync("apt-get", ["update"], { stdio: "inherit" })
      execFileSync("apt-get", ["install", "-y", "wrk"], { stdio: "inherit" })
    }
  }
}

const luaString = (text: string): string => `[==[${text}]==]`

const script = (dir: string, request: Request): string => {
  const file = path.join(dir, `wrk-${Math.random().toString(36).slice(2)}.lua`)
  const headers = Object.entries({ "content-type": "application/json", ...request.headers })
    .map(([name, value]) => `wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`)
  fs.writeFileSync(file, [`wrk.method = "POST"`, `wrk.body = ${luaString(request.body)}`, ...headers].join("\n") + "\n")
  return file
}

const toMs = (value: string, unit: string): number =>
  Number(value) * (unit === "us" ? 0.001 : unit === "ms" ? 1 : unit === "s" ? 1000 : unit === "m" ? 60_000 : Number.NaN)

export const parseWrk = (output: string): WrkResult => {
  const percentile = (p: string): number => {
    const match = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(output)
    return match === null ? Number.NaN : toMs(match[1]!, match[2]!)
  }
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? Number.NaN)
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0)
  return {
    requests,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? Number.NaN),
    p50Ms: percentile("50"),
    p99Ms: percentile("99"),
    errors: non2xx + socketErrors
  }
}

export const wrk = (
  prefix: ReadonlyArray<string>,
  workDir: string,
  baseUrl: string,
  request: Request,
  connections: number,
  seconds: number
): Promise<WrkResult> => {
  const lua = script(workDir, request)
  const [file, ...args] = [...prefix, "wrk", "-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", lua, baseUrl + request.path]
  return new Promise((resolve, reject) => {
    execFile(file!, args, { maxBuffer: 1 << 20 }, (error, stdout) => {
      fs.rmSync(lua, { force: true })
      if (error !== null) reject(error)
      else {
        if (process.env.BENCH_DEBUG === "1") process.stdout.write(stdout)
        resolve(parseWrk(stdout))
      }
    })
  })
}

export interface CpuMeasured {
  readonly result: WrkResult
  /** CPU ms a request of the process and its descendants (the service's embedded PostgreSQL). */
  readonly cpuMsPerRequest: number
  /** CPU ms a request of the process alone. */
  readonly ownMsPerRequest: number
}

/** A wrk run against one target, with the CPU time its process (and its children) spent per request meanwhile. */
export const wrkWithCpu = async (
  prefix: ReadonlyArray<string>,
  workDir: string,
  baseUrl: string,
  request: Request,
  connections: number,
  seconds: number,
  pid: number
): Promise<CpuMeasured> => {
  const tree = processTree(pid)
  const treeBefore = cpuSeconds(tree)
  const ownBefore = cpuSeconds([pid])
  const result = await wrk(prefix, workDir, baseUrl, request, connections, seconds)
  return {
    result,
    cpuMsPerRequest: ((cpuSeconds(tree) - treeBefore) * 1000) / result.requests,
    ownMsPerRequest: ((cpuSeconds([pid]) - ownBefore) * 1000) / result.requests
  }
}

/** Median time to the first body byte over sequential requests on one connection, for `seconds`. */
export const timeToFirstByte = async (baseUrl: string, request: Request, seconds: number): Promise<number> => {
  const client = new Client(baseUrl, { pipelining: 1 })
  const samples: Array<number> = []
  const until = performance.now() + seconds * 1000
  try {
    while (performance.now() < until) {
      const started = performance.now()
      const answer = await client.request({
        method: "POST",
        path: request.path,
        headers: { "content-type": "application/json", ...request.headers },
        body: request.body
      })
      let first = Number.NaN
      for await (const _chunk of answer.body) {
        if (Number.isNaN(first)) first = performance.now() - started
      }
      if (answer.statusCode === 200) samples.push(first)
    }
  } finally {
    await client.close()
  }
  return median(samples)
}

/** The p-th percentile (0–100) by nearest rank; NaN when there is nothing to rank. */
export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
