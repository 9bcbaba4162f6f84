// Starting the processes of the benchmark pinned to a core, waiting for them, and reading their CPU time and peak RSS.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"

export interface Started {
  readonly name: string
  readonly child: ChildProcess
  readonly pid: number
}

const cores = (): number => {
  const cpuinfo = fs.readFileSync("/proc/cpuinfo", "utf8")
  return cpuinfo.split("\n").filter((line) => line.startsWith("processor")).length
}

/** CPU 0 for the process under test, CPU 1 for the simulator and the load generator (when there are two cores). */
export const pinning = (): { readonly underTest: Array<string>; readonly driver: Array<string>; readonly note: string } =>
  cores() >= 2
    ? { underTest: ["taskset", "-c", "0"], driver: ["taskset", "-c", "1"], note: "process under test on CPU 0; simulator and wrk on CPU 1 (taskset)" }
    : { underTest: [], driver: [], note: "one core: nothing pinned" }

export const start = (
  name: string,
  command: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string; readonly log: string }
): Started => {
  const out = fs.openSync(options.log, "a")
  const [file, ...args] = command
  const child = spawn(file!, args, { env: { ...process.env, ...options.env }, cwd: options.cwd, stdio: ["ignore", out, out] })
  if (child.pid === undefined) throw new Error(`could not start ${name}`)
  return { name, child, pid: child.pid }
}

export const waitForPort = async (port: number, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1")
      socket.once("connect", () => {
        socket.destroy()
        resolve(true)
      })
      socket.once("error", () => resolve(false))
    })
    if (open) return
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`nothing listening on ${port} after ${timeoutMs} ms`)
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

const ticksPerSecond = 100

const statOf = (pid: number): { ppid: number; ticks: number } | undefined => {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ")
    // After the command: state(0) ppid(1) ... utime(11) stime(12)
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) }
  } catch {
    return undefined
  }
}

/** The process and its descendants (the service's embedded PostgreSQL counts against it). */
export const processTree = (root: number): Array<number> => {
  const parents = new Map<number, number>()
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const stat = statOf(pid)
    if (stat !== undefined) parents.set(pid, stat.ppid)
  }
  const tree = [root]
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid)
  }
  return tree
}

/** CPU seconds (user + system) used so far by these processes. */
export const cpuSeconds = (pids: ReadonlyArray<number>): number =>
  pids.reduce((sum, pid) => sum + (statOf(pid)?.ticks ?? 0), 0) / ticksPerSecond

/** Peak resident set of one process so far, in MB. */
export const peakRssMb = (pid: number): number => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const match = /VmHWM:\s+(\d+) kB/.exec(status)
  return match === null ? Number.NaN : Number(match[1]) / 1024
}

export const stop = async (started: Started): Promise<void> => {
  if (started.child.exitCode !== null) return
  const exited = new Promise<void>((resolve) => started.child.once("exit", () => resolve()))
  started.child.kill("SIGTERM")
  const timer = setTimeout(() => started.child.kill("SIGKILL"), 10_000)
  await exited
  clearTimeout(timer)
}

/** This process's soft and hard limits on open files (/proc/self/limits; "unlimited" as Infinity). */
export const openFilesLimit = (): { readonly soft: number; readonly hard: number } => {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(fs.readFileSync("/proc/self/limits", "utf8"))
  const value = (text: string | undefined) => (text === "unlimited" ? Infinity : Number(text))
  return { soft: value(line?.[1]), hard: value(line?.[2]) }
}

/**
 * Node raises its soft limit on open files to the hard limit by itself, but cannot raise the hard one. When that is
 * below `needed` and a shell may raise it (root with CAP_SYS_RESOURCE), this script runs again under
 * `sh -c 'ulimit -n …'` (its children, the processes under test, inherit the limit) and this process exits with its
 * status. Otherwise returns the limit, which may still be too low.
 */
export const ensureOpenFiles = (needed: number): number => {
  const { soft } = openFilesLimit()
  if (soft >= needed || process.env.BENCH_OPEN_FILES_RAISED === "1") return soft
  if (spawnSync("/bin/sh", ["-c", `ulimit -n ${needed}`], { stdio: "ignore" }).status !== 0) return soft
  process.stdout.write(`open files: raising the limit from ${soft} to ${needed} and starting again\n`)
  const again = spawnSync(
    "/bin/sh",
    ["-c", `ulimit -n ${needed} && exec "$0" "$@"`, process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: "inherit", env: { ...process.env, BENCH_OPEN_FILES_RAISED: "1" } }
  )
  process.exit(again.status ?? 1)
}
