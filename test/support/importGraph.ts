/**
 * The project's import graph, read from the sources with the TypeScript parser (no type checking), and the
 * two things the layering test asks of it: no cycle, and no import against the layers' directions
 * (docs/development.md, "Layers and import directions"). Type-only imports count: they tie the files as
 * much as the others for whoever reads or moves them.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

/** One import of a file: the specifier as written and whether it is written as type-only. */
export interface ImportSpecifier {
  readonly specifier: string
  readonly typeOnly: boolean
}

/** Every module a source file names: static and dynamic imports, `export … from`, `import("…")` types, `require`. */
export const importSpecifiers = (fileName: string, text: string): {
  readonly imports: ReadonlyArray<ImportSpecifier>
  /** Dynamic imports whose module is not a string literal: the graph cannot follow them. */
  readonly unreadable: ReadonlyArray<string>
} => {
  const kind = fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind)
  const imports: Array<ImportSpecifier> = []
  const unreadable: Array<string> = []
  const literal = (node: ts.Node | undefined): string | undefined =>
    node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause
      const namedAllTypes =
        clause?.namedBindings !== undefined &&
        ts.isNamedImports(clause.namedBindings) &&
        clause.namedBindings.elements.length > 0 &&
        clause.namedBindings.elements.every((e) => e.isTypeOnly) &&
        clause.name === undefined
      imports.push({ specifier: literal(node.moduleSpecifier)!, typeOnly: clause?.isTypeOnly === true || namedAllTypes })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      imports.push({ specifier: literal(node.moduleSpecifier)!, typeOnly: node.isTypeOnly })
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      imports.push({ specifier: literal(node.moduleReference.expression)!, typeOnly: node.isTypeOnly })
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const specifier = literal(node.argument.literal)
      if (specifier !== undefined) imports.push({ specifier, typeOnly: true })
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require"))
    ) {
      const specifier = literal(node.arguments[0])
      if (specifier !== undefined) imports.push({ specifier, typeOnly: false })
      else if (node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source))
        unreadable.push(`${fileName}:${line + 1}: ${node.getText(source)}`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return { imports, unreadable }
}

/** `.ts` and `.tsx` files under `dir` (relative to `root`, `/`-separated), sorted. */
export const sourceFilesUnder = (root: string, dir: string): ReadonlyArray<string> =>
  fs
    .readdirSync(path.join(root, dir), { recursive: true, encoding: "utf8" })
    .map((name) => path.posix.join(dir, name.split(path.sep).join("/")))
    .filter((file) => /\.tsx?$/.test(file) && fs.statSync(path.join(root, file)).isFile())
    .sort()

const isRelative = (specifier: string) => specifier.startsWith("./") || specifier.startsWith("../") || specifier === "." || specifier === ".."

/**
 * The file a relative specifier names, as the compiler's "Bundler" resolution finds it (`./x` is `x.ts`,
 * `x.tsx`, `x.d.ts` or `x/index.ts(x)`; `./x.js` is `x.ts`); `undefined` when none exists.
 */
export const resolveRelative = (root: string, fromFile: string, specifier: string): string | undefined => {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier))
  const stem = base.replace(/\.(m?j)sx?$/, "")
  const candidates = [
    base,
    ...[".ts", ".tsx", ".d.ts"].map((ext) => stem + ext),
    ...["index.ts", "index.tsx"].map((index) => path.posix.join(base, index))
  ]
  return candidates.find((file) => fs.existsSync(path.join(root, file)) && fs.statSync(path.join(root, file)).isFile())
}

export interface ImportEdge {
  readonly from: string
  readonly to: string
  readonly typeOnly: boolean
}

export interface ImportGraph {
  readonly files: ReadonlyArray<string>
  readonly edges: ReadonlyArray<ImportEdge>
  /** What the graph could not follow: relative imports that name no file, computed dynamic imports, subpath imports. */
  readonly unresolved: ReadonlyArray<string>
}

/** The graph of every `.ts`/`.tsx` file under `dirs`; an edge for each project file one of them imports. */
export const importGraph = (root: string, dirs: ReadonlyArray<string>): ImportGraph => {
  const files = dirs.flatMap((dir) => sourceFilesUnder(root, dir))
  const edges: Array<ImportEdge> = []
  const unresolved: Array<string> = []
  for (const from of files) {
    const { imports, unreadable } = importSpecifiers(from, fs.readFileSync(path.join(root, from), "utf8"))
    unresolved.push(...unreadable)
    for (const { specifier, typeOnly } of imports) {
      if (isRelative(specifier) || specifier.startsWith("/")) {
        const to = specifier.startsWith("/") ? undefined : resolveRelative(root, from, specifier)
        if (to === undefined) unresolved.push(`${from}: "${specifier}" names no file`)
        else edges.push({ from, to, typeOnly })
      } else if (specifier.startsWith("#")) {
        // package.json "imports" would reach project files the graph does not see.
        unresolved.push(`${from}: "${specifier}" is a subpath import`)
      }
    }
  }
  return { files, edges, unresolved }
}

/**
 * The import cycles: every strongly connected component of more than one file, and every file importing
 * itself, each as one cycle through it (the shortest from its first file, in order) and all its files.
 */
export const importCycles = (graph: ImportGraph): ReadonlyArray<{ readonly cycle: ReadonlyArray<string>; readonly files: ReadonlyArray<string> }> => {
  const next = new Map<string, Array<string>>()
  for (const { from, to } of graph.edges) {
    const targets = next.get(from) ?? []
    if (!targets.includes(to)) targets.push(to)
    next.set(from, targets)
  }
  // Tarjan's algorithm, iterative so that a long chain of imports cannot overflow the stack.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: Array<string> = []
  const components: Array<Array<string>> = []
  let counter = 0
  const nodes = [...new Set([...graph.files, ...graph.edges.map((e) => e.to)])].sort()
  for (const start of nodes) {
    if (index.has(start)) continue
    const work: Array<{ node: string; child: number }> = [{ node: start, child: 0 }]
    index.set(start, counter)
    low.set(start, counter++)
    stack.push(start)
    onStack.add(start)
    while (work.length > 0) {
      const frame = work[work.length - 1]!
      const targets = next.get(frame.node) ?? []
      if (frame.child < targets.length) {
        const target = targets[frame.child++]!
        if (!index.has(target)) {
          index.set(target, counter)
          low.set(target, counter++)
          stack.push(target)
          onStack.add(target)
          work.push({ node: target, child: 0 })
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!))
        }
        continue
      }
      work.pop()
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!))
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: Array<string> = []
        let member: string
        do {
          member = stack.pop()!
          onStack.delete(member)
          component.push(member)
        } while (member !== frame.node)
        const selfImport = component.length === 1 && (next.get(member) ?? []).includes(member)
        if (component.length > 1 || selfImport) components.push(component.sort())
      }
    }
  }
  return components.map((files) => ({ cycle: shortestCycle(next, files), files }))
}

/** The shortest way from a component's first file back to itself, within the component (breadth first). */
const shortestCycle = (next: ReadonlyMap<string, ReadonlyArray<string>>, files: ReadonlyArray<string>): ReadonlyArray<string> => {
  const first = files[0]!
  const inside = new Set(files)
  const cameFrom = new Map<string, string>()
  const queue = [first]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!
    for (const target of next.get(node) ?? []) {
      if (!inside.has(target)) continue
      if (target === first) {
        const way = [node]
        while (way[0] !== first) way.unshift(cameFrom.get(way[0]!)!)
        return [...way, first]
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node)
        queue.push(target)
      }
    }
  }
  return files
}

/** A layer: its files (folders end with `/`) and the layers it may import besides itself. */
export interface Layer {
  readonly name: string
  readonly paths: ReadonlyArray<string>
  readonly mayImport: ReadonlyArray<string>
}

/**
 * The layers table under the heading `heading` of a Markdown page: rows `| name | paths | may import |`,
 * names and paths in backquotes, comma-separated; anything else in the third column (a dash, "nothing")
 * means no other layer. Throws, naming the row, when the table is missing or names an unknown layer.
 */
export const parseLayerTable = (markdown: string, heading: string): ReadonlyArray<Layer> => {
  const lines = markdown.split("\n")
  const start = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, "").trim() === heading)
  if (start < 0) throw new Error(`no heading "${heading}"`)
  const rows: Array<Layer> = []
  let inTable = false
  for (const line of lines.slice(start + 1)) {
    if (/^#+ /.test(line)) break
    if (!line.startsWith("|")) {
      if (inTable) break
      continue
    }
    inTable = true
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim())
    if (cells.length !== 3) throw new Error(`a layers row has ${cells.length} cells, not 3: ${line}`)
    if (/^-+$/.test(cells[0]!.replace(/:/g, "")) || cells[0] === "Layer") continue
    const quoted = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
    const [name] = quoted(cells[0]!)
    if (name === undefined) throw new Error(`a layers row names no layer: ${line}`)
    rows.push({ name, paths: quoted(cells[1]!), mayImport: quoted(cells[2]!) })
  }
  if (rows.length === 0) throw new Error(`no layers table under "${heading}"`)
  const names = new Set(rows.map((row) => row.name))
  for (const row of rows) {
    if (row.paths.length === 0) throw new Error(`layer ${row.name} has no files`)
    for (const other of row.mayImport) if (!names.has(other)) throw new Error(`layer ${row.name} may import an unknown layer ${other}`)
  }
  return rows
}

/** The layer a file is in: the one with the longest path that is the file or a folder holding it. */
export const layerOf = (layers: ReadonlyArray<Layer>, file: string): Layer | undefined => {
  let best: { layer: Layer; length: number } | undefined
  for (const layer of layers) {
    for (const p of layer.paths) {
      const holds = p.endsWith("/") ? file.startsWith(p) : file === p
      if (holds && (best === undefined || p.length > best.length)) best = { layer, length: p.length }
    }
  }
  return best?.layer
}

/** Files in no layer, and imports a layer may not make (`from (layer) → to (layer)`). */
export const layerViolations = (graph: ImportGraph, layers: ReadonlyArray<Layer>): {
  readonly unplaced: ReadonlyArray<string>
  readonly forbidden: ReadonlyArray<string>
} => {
  const unplaced = new Set<string>()
  const forbidden: Array<string> = []
  for (const file of graph.files) if (layerOf(layers, file) === undefined) unplaced.add(file)
  for (const { from, to, typeOnly } of graph.edges) {
    // Other files (a stylesheet, JSON) import nothing: they can be in no cycle and take no direction.
    if (!/\.tsx?$/.test(to)) continue
    const source = layerOf(layers, from)
    const target = layerOf(layers, to)
    if (target === undefined) unplaced.add(to)
    if (source === undefined || target === undefined || source === target) continue
    if (!source.mayImport.includes(target.name)) {
      forbidden.push(`${source.name} → ${target.name}: ${from} imports ${typeOnly ? "(types only) " : ""}${to}`)
    }
  }
  // A file naming another twice (`import type` and `export type … from`) is one wrong direction.
  return { unplaced: [...unplaced].sort(), forbidden: [...new Set(forbidden)] }
}
