// Many streams held open at once through Node's own http client: `streams` clients, each running one stream after
// another on a keep-alive connection for `seconds` (so that the concurrency holds), started over a ramp so that the
// connections do not all knock at once (a burst beyond the listen backlog waits a SYN retransmission, a second, which
// would read as the gateway's stall). The connections come from several loopback addresses, at most `perAddress` each:
// 1,024 streams are many clients, and the service limits the connections of one address.
import * as http from "node:http"
import { monitorEventLoopDelay } from "node:perf_hooks"
import type { Request } from "./load"
import { EventClock, type StreamTiming, timingOf } from "./streamTimings"

export interface StreamLoadOptions {
  readonly baseUrl: string
  readonly request: Request
  readonly streams: number
  readonly seconds: number
  /** Over how long the clients start, one after another. */
  readonly rampMs: number
  /** How long streams still running when the load ends may take to finish; then they are cut ("unfinished"). */
  readonly drainMs: number
  readonly perAddress: number
}

export interface StreamLoadResult {
  readonly timings: ReadonlyArray<StreamTiming>
  readonly wallMs: number
  /** This process's CPU time over the load, in % of one core: near 100, the client would be the bottleneck. */
  readonly clientCpuPercent: number
  /** This process's event-loop delay, p99, in ms: how late the client may have noted an arrival. */
  readonly clientLoopDelayP99Ms: number
}

const loopResolutionMs = 5

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** 127.0.0.2, 127.0.0.3, …: every address of 127.0.0.0/8 is the loopback interface's on Linux. */
const loopbackAddresses = (count: number): Array<string> => Array.from({ length: count }, (_, i) => `127.0.0.${i + 2}`)

export const runStreams = async (options: StreamLoadOptions): Promise<StreamLoadResult> => {
  const url = new URL(options.baseUrl)
  const agents = loopbackAddresses(Math.ceil(options.streams / options.perAddress)).map(
    (localAddress) => new http.Agent({ keepAlive: true, maxSockets: options.perAddress, localAddress })
  )
  const body = Buffer.from(options.request.body)
  const headers = { "content-type": "application/json", "content-length": String(body.length), ...options.request.headers }
  const inFlight = new Set<http.ClientRequest>()
  /** The streams still running at the deadline, cut: whatever error their socket reports, they are "unfinished". */
  const cut = new WeakSet<http.ClientRequest>()
  const timings: Array<StreamTiming> = []

  const oneStream = (agent: http.Agent): Promise<StreamTiming> =>
    new Promise((resolve) => {
      const startedAt = performance.now()
      const clock = new EventClock()
      let settled = false
      const settle = (failure: string | undefined) => {
        if (settled) return
        settled = true
        inFlight.delete(request)
        resolve(timingOf(startedAt, clock, cut.has(request) ? "unfinished at the deadline" : failure))
      }
      const request = http.request(
        { host: url.hostname, port: url.port, path: options.request.path, method: "POST", headers, agent },
        (response) => {
          response.setEncoding("utf8")
          response.on("data", (text: string) => clock.push(text, performance.now()))
          response.on("end", () =>
            settle(response.statusCode !== 200 ? `status ${response.statusCode}` : clock.sawDone ? undefined : "ended without [DONE]")
          )
          response.on("close", () => settle(response.complete ? undefined : "closed mid-stream"))
          response.on("error", (error: NodeJS.ErrnoException) => settle(error.code ?? error.message))
        }
      )
      request.on("error", (error: NodeJS.ErrnoException) => settle(error.code ?? error.message))
      inFlight.add(request)
      request.end(body)
    })

  const loop = monitorEventLoopDelay({ resolution: loopResolutionMs })
  const cpuBefore = process.cpuUsage()
  const began = performance.now()
  const stopAt = began + options.seconds * 1000
  loop.enable()
  const client = async (index: number): Promise<void> => {
    await sleep((options.rampMs * index) / options.streams)
    const agent = agents[index % agents.length]!
    while (performance.now() < stopAt) {
      const timing = await oneStream(agent)
      timings.push(timing)
      // A target that refuses at once is not hammered in a tight loop.
      if (timing.failure !== undefined) await sleep(50)
    }
  }
  const clients = Promise.all(Array.from({ length: options.streams }, (_, i) => client(i)))
  const drained = await Promise.race([clients.then(() => true), sleep(options.seconds * 1000 + options.drainMs).then(() => false)])
  if (!drained) {
    for (const request of inFlight) {
      cut.add(request)
      request.destroy()
    }
  }
  await clients
  loop.disable()
  const wallMs = performance.now() - began
  const cpu = process.cpuUsage(cpuBefore)
  for (const agent of agents) agent.destroy()
  return {
    timings,
    wallMs,
    clientCpuPercent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
    // The histogram holds the sampling timer's whole interval: the delay is what exceeds it.
    clientLoopDelayP99Ms: Math.max(0, loop.percentile(99) / 1e6 - loopResolutionMs)
  }
}
