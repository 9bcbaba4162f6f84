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

/** @type {ReadonlyArray<BuildStep>} */
export const steps = [
  {
    // The service, the operator CLI and the upstream simulator as ESM bundles of our own code; packages stay
    // in node_modules (imports are extensionless, moduleResolution Bundler, so tsc's output would not run
    // under Node's ESM loader). sql/ and config/ are read from the repository at run time.
    name: "server",
    inputs: ["src", "sql", "tsconfig.json"],
    run: async () => {
      // Loaded here, not at the top: a fresh build is checked without loading esbuild.
      const { build } = await import("esbuild")
      // Built beside and then moved in, so a process starting meanwhile never sees half a build.
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
        packages: "external",
        // Linked maps: `node --enable-source-maps dist/server/main.js` maps stacks back to src/.
        sourcemap: "linked",
        logLevel: "warning"
      })
      fs.rmSync(out, { recursive: true, force: true })
      fs.renameSync(next, out)
    }
  },
  {
    // The web console (web/, Preact + uPlot) as static files the service serves under /console/. It imports
    // types from src/api and src/domain, erased in the bundle: those are not inputs.
    name: "web",
    inputs: ["web"],
    run: async () => {
      const { build } = await import("vite")
      await build({ configFile: path.join(root, "web", "vite.config.ts"), logLevel: "warn" })
    }
  }
]

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
