// Reads a V8 .cpuprofile (node --cpu-prof) and sums self time by function and by where the code lives:
// the service's own files, Effect, undici, other packages, Node's internals, GC, idle.
import * as fs from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly hitCount?: number
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const placeOf = (url: string, name: string): string => {
  if (name === "(garbage collector)") return "gc"
  if (name === "(idle)" || name === "(program)") return name.slice(1, -1)
  if (url === "") return "native"
  if (url.startsWith("node:")) return "node"
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg !== null) return pkg[1]!.startsWith("@effect/") || pkg[1] === "effect" ? `effect (${pkg[1]})` : pkg[1]!
  return url.includes("/src/") ? "service src" : url
}

/** Lines of text: self time by place, then the `top` functions, each in % of busy (non-idle) time. */
export const summarise = (file: string, top = 30): string => {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMicros = new Map<number, number>()
  profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const byPlace = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let busy = 0
  for (const [id, micros] of selfMicros) {
    const { functionName, lineNumber, url } = byId.get(id)!.callFrame
    const place = placeOf(url, functionName)
    byPlace.set(place, (byPlace.get(place) ?? 0) + micros)
    if (place === "idle") continue
    busy += micros
    const key = `${functionName || "(anonymous)"} ${url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/src\//, "src/")}:${lineNumber + 1}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros)
  }
  const percent = (micros: number) => `${((100 * micros) / busy).toFixed(1).padStart(5)} %`
  const sorted = (map: Map<string, number>) => [...map].filter(([k]) => k !== "idle").sort((a, b) => b[1] - a[1])
  return [
    `busy ${(busy / 1e6).toFixed(2)} s, idle ${((byPlace.get("idle") ?? 0) / 1e6).toFixed(2)} s`,
    "",
    "self time by place:",
    ...sorted(byPlace).map(([place, micros]) => `${percent(micros)}  ${place}`),
    "",
    `top ${top} functions by self time:`,
    ...sorted(byFunction).slice(0, top).map(([name, micros]) => `${percent(micros)}  ${name}`)
  ].join("\n")
}
