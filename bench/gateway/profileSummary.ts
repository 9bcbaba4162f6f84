// Reads a V8 .cpuprofile (node --cpu-prof) and sums self time by function and by where the code lives:
// the service's own files, Effect, undici, other packages, Node's internals, GC, idle. A bundled build's
// positions are mapped back through its linked source maps (`dist/**/*.js.map`), so a profile of the built
// service names `src/` files and packages as a profile of the sources would. Inclusive time (a function and
// everything it called) is given for the service's own functions: that is where a request's cost is decided.
import * as fs from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

interface Frame {
  readonly place: string
  readonly name: string
}

const maps = new Map<string, SourceMap | undefined>()

const sourceMapOf = (url: string): SourceMap | undefined => {
  if (!maps.has(url)) {
    let map: SourceMap | undefined
    try {
      const file = fileURLToPath(url)
      if (fs.existsSync(`${file}.map`)) map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, "utf8")))
    } catch {
      map = undefined
    }
    maps.set(url, map)
  }
  return maps.get(url)
}

const placeOfSource = (source: string): string => {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)
  if (pkg !== null) return pkg[1]!.startsWith("@effect/") || pkg[1] === "effect" ? `effect (${pkg[1]})` : pkg[1]!
  return source.includes("src/") ? "service src" : source
}

const shortSource = (source: string): string =>
  source.includes("node_modules/") ? source.replace(/^.*node_modules\//, "") : source.replace(/^.*?\bsrc\//, "src/").replace(/^file:\/\//, "")

/** Where a profile node's code lives, through the source map when the file has one. */
const frameOf = (node: ProfileNode): Frame => {
  const { functionName, url, lineNumber, columnNumber } = node.callFrame
  if (functionName === "(garbage collector)") return { place: "gc", name: functionName }
  if (functionName === "(idle)" || functionName === "(program)") return { place: functionName.slice(1, -1), name: functionName }
  if (url === "") return { place: "native", name: `${functionName || "(anonymous)"} (native)` }
  if (url.startsWith("node:")) return { place: "node", name: `${functionName || "(anonymous)"} ${url}:${lineNumber + 1}` }
  const map = url.startsWith("file:") ? sourceMapOf(url) : undefined
  const entry = map?.findEntry(lineNumber, columnNumber) as
    | { originalSource?: string; originalLine?: number; name?: string }
    | undefined
  if (entry?.originalSource !== undefined) {
    const source = shortSource(entry.originalSource)
    return { place: placeOfSource(entry.originalSource), name: `${functionName || "(anonymous)"} ${source}:${(entry.originalLine ?? 0) + 1}` }
  }
  return { place: placeOfSource(url), name: `${functionName || "(anonymous)"} ${shortSource(url)}:${lineNumber + 1}` }
}

/** Lines of text: self time by place, the `top` functions by self time, and the service's own functions by
 * inclusive time, each in % of busy (non-idle) time. */
export const summarise = (file: string, top = 30): string => {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  const frames = new Map(profile.nodes.map((node) => [node.id, frameOf(node)]))
  const selfMicros = new Map<number, number>()
  profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const byPlace = new Map<string, number>()
  const byFunction = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let busy = 0
  for (const [id, micros] of selfMicros) {
    const frame = frames.get(id)!
    byPlace.set(frame.place, (byPlace.get(frame.place) ?? 0) + micros)
    if (frame.place === "idle") continue
    busy += micros
    byFunction.set(frame.name, (byFunction.get(frame.name) ?? 0) + micros)
    // Each of the service's functions on this sample's stack counts it once, however deep it recurses.
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const onStack = frames.get(at)!
      if (onStack.place !== "service src" || seen.has(onStack.name)) continue
      seen.add(onStack.name)
      inclusive.set(onStack.name, (inclusive.get(onStack.name) ?? 0) + micros)
    }
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
    ...sorted(byFunction).slice(0, top).map(([name, micros]) => `${percent(micros)}  ${name}`),
    "",
    `top ${top} of the service's functions by inclusive time:`,
    ...sorted(inclusive).slice(0, top).map(([name, micros]) => `${percent(micros)}  ${name}`)
  ].join("\n")
}

interface HeapNode {
  readonly callFrame: ProfileNode["callFrame"]
  readonly selfSize: number
  readonly children: ReadonlyArray<HeapNode>
}

/** The same for a sampled allocation profile (.heapprofile, BENCH_PROFILE=alloc): bytes allocated instead of time. */
export const summariseAllocations = (file: string, top = 30): string => {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as { readonly head: HeapNode }
  const byPlace = new Map<string, number>()
  const byFunction = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let total = 0
  const walk = (node: HeapNode, stack: ReadonlyArray<Frame>) => {
    const frame = frameOf({ id: 0, callFrame: node.callFrame })
    const here = [...stack, frame]
    if (node.selfSize > 0) {
      total += node.selfSize
      byPlace.set(frame.place, (byPlace.get(frame.place) ?? 0) + node.selfSize)
      byFunction.set(frame.name, (byFunction.get(frame.name) ?? 0) + node.selfSize)
      const seen = new Set<string>()
      for (const onStack of here) {
        if (onStack.place !== "service src" || seen.has(onStack.name)) continue
        seen.add(onStack.name)
        inclusive.set(onStack.name, (inclusive.get(onStack.name) ?? 0) + node.selfSize)
      }
    }
    for (const child of node.children) walk(child, here)
  }
  walk(profile.head, [])
  const percent = (bytes: number) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %`
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1])
  return [
    `allocated (sampled) ${(total / 2 ** 20).toFixed(1)} MB`,
    "",
    "allocated by place:",
    ...sorted(byPlace).map(([place, bytes]) => `${percent(bytes)}  ${place}`),
    "",
    `top ${top} functions by bytes allocated:`,
    ...sorted(byFunction).slice(0, top).map(([name, bytes]) => `${percent(bytes)}  ${name}`),
    "",
    `top ${top} of the service's functions by bytes allocated in them and what they called:`,
    ...sorted(inclusive).slice(0, top).map(([name, bytes]) => `${percent(bytes)}  ${name}`)
  ].join("\n")
}

// `tsx bench/gateway/profileSummary.ts <file> [top]`: either kind of profile, by its extension.
if (process.argv[1] !== undefined && import.meta.filename === fs.realpathSync(process.argv[1])) {
  const [file, top] = process.argv.slice(2)
  if (file === undefined) throw new Error("usage: profileSummary.ts <.cpuprofile or .heapprofile> [top]")
  const count = Number(top ?? "40")
  process.stdout.write(`${file.endsWith(".heapprofile") ? summariseAllocations(file, count) : summarise(file, count)}\n`)
}
