/**
 * The layers of src/ and web/src/ as docs/development.md ("Layers and import directions") lays them out:
 * every file in a layer, every import in an allowed direction, no import cycle. The first part checks
 * the import reader itself on a small project made for it, so that a green run means the graph was read.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { importCycles, importGraph, importSpecifiers, type Layer, layerViolations, parseLayerTable } from "../support/importGraph"
import { tempDir } from "../support/tempDirs"

const root = path.resolve(import.meta.dirname, "../..")
const heading = "Layers and import directions"

describe("the import reader", () => {
  it("reads every way a file names another, type-only ones included", () => {
    const { imports, unreadable } = importSpecifiers(
      "a.tsx",
      [
        `import { a } from "./a1"`,
        `import type { B } from "./b"`,
        `import { type C } from "./c"`,
        `import "./sideEffect"`,
        `export { d } from "./d"`,
        `export * from "./e"`,
        `export type { F } from "./f"`,
        `type G = import("./g").G`,
        `const h = () => import("./h")`,
        `const i = require("./i")`,
        `const j = (name: string) => import(name)`,
        `// import { no } from "./comment"`,
        `const text = 'import { no } from "./string"'`,
        `export const View = () => <div>{import("./k").then(String)}</div>`
      ].join("\n")
    )
    expect(imports).toEqual([
      { specifier: "./a1", typeOnly: false },
      { specifier: "./b", typeOnly: true },
      { specifier: "./c", typeOnly: true },
      { specifier: "./sideEffect", typeOnly: false },
      { specifier: "./d", typeOnly: false },
      { specifier: "./e", typeOnly: false },
      { specifier: "./f", typeOnly: true },
      { specifier: "./g", typeOnly: true },
      { specifier: "./h", typeOnly: false },
      { specifier: "./i", typeOnly: false },
      { specifier: "./k", typeOnly: false }
    ])
    expect(unreadable).toEqual(["a.tsx:11: import(name)"])
  })

  it("resolves files as the compiler does, finds cycles and wrong directions, and names what it cannot follow", () => {
    const dir = tempDir("ws-layering-")
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
      fs.writeFileSync(path.join(dir, file), text)
    }
    write("src/low/index.ts", `export const low = 1`)
    write("src/low/self.ts", `import type { Self } from "./self"\nexport type Self = number`)
    write("src/low/up.ts", `import type { High } from "../high/high.js"\nexport type Up = High`)
    write("src/high/high.ts", `import { low } from "../low"\nimport type { Ring } from "./ring1"\nexport type High = Ring`)
    write("src/high/ring1.ts", `import type { Ring2 } from "./ring2"\nexport type Ring = Ring2`)
    write("src/high/ring2.ts", `export type Ring2 = import("./ring3").Ring3`)
    write("src/high/ring3.tsx", `export const view = () => import("./ring1")\nexport type Ring3 = string`)
    write("src/high/broken.ts", `import { gone } from "./missing"\nimport { x } from "#internal"`)
    write("src/stray.ts", `export const stray = 1`)
    const layers: ReadonlyArray<Layer> = [
      { name: "low", paths: ["src/low/"], mayImport: [] },
      { name: "high", paths: ["src/high/"], mayImport: ["low"] }
    ]
    const graph = importGraph(dir, ["src"])
    expect(graph.edges).toContainEqual({ from: "src/high/high.ts", to: "src/low/index.ts", typeOnly: false })
    expect(graph.edges).toContainEqual({ from: "src/low/up.ts", to: "src/high/high.ts", typeOnly: true })
    expect(graph.unresolved).toEqual([
      `src/high/broken.ts: "./missing" names no file`,
      `src/high/broken.ts: "#internal" is a subpath import`
    ])
    expect(importCycles(graph)).toEqual([
      {
        cycle: ["src/high/ring1.ts", "src/high/ring2.ts", "src/high/ring3.tsx", "src/high/ring1.ts"],
        files: ["src/high/ring1.ts", "src/high/ring2.ts", "src/high/ring3.tsx"]
      },
      { cycle: ["src/low/self.ts", "src/low/self.ts"], files: ["src/low/self.ts"] }
    ])
    expect(layerViolations(graph, layers)).toEqual({
      unplaced: ["src/stray.ts"],
      forbidden: ["low → high: src/low/up.ts imports (types only) src/high/high.ts"]
    })
  })

  it("reads the layers table of a page, and refuses one that names an unknown layer", () => {
    const page = (rows: string) =>
      `# Page\n\n## ${heading}\n\nText.\n\n| Layer | Files | May import |\n| --- | --- | --- |\n${rows}\n\n## Next\n\n| a | b | c |\n`
    expect(parseLayerTable(page("| `low` | `src/low/`, `src/low.ts` | nothing |\n| `high` | `src/high/` | `low` |"), heading)).toEqual([
      { name: "low", paths: ["src/low/", "src/low.ts"], mayImport: [] },
      { name: "high", paths: ["src/high/"], mayImport: ["low"] }
    ])
    expect(() => parseLayerTable(page("| `high` | `src/high/` | `lower` |"), heading)).toThrow("unknown layer lower")
    expect(() => parseLayerTable("# Page\n", heading)).toThrow(`no heading "${heading}"`)
  })
})

describe("src/ and web/src/", () => {
  const layers = parseLayerTable(fs.readFileSync(path.join(root, "docs/development.md"), "utf8"), heading)
  const graph = importGraph(root, ["src", "web/src"])

  it("are read whole: every relative import names a file", () => {
    expect(graph.files.length).toBeGreaterThan(200)
    expect(graph.unresolved).toEqual([])
  })

  it("name in docs/development.md only files and folders that exist", () => {
    const missing = layers.flatMap((layer) => layer.paths).filter((p) => !fs.existsSync(path.join(root, p)))
    expect(missing).toEqual([])
  })

  it("have every file in a layer, and import only in the directions docs/development.md allows", () => {
    expect(layerViolations(graph, layers)).toEqual({ unplaced: [], forbidden: [] })
  })

  it("have no import cycle", () => {
    const cycles = importCycles(graph).map(({ cycle, files }) => `${cycle.join(" → ")} (${files.length} files: ${files.join(", ")})`)
    expect(cycles).toEqual([])
  })
})
