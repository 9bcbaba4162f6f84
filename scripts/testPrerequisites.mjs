#!/usr/bin/env node
// Run by `npm test` before anything else: the programs the tests need that npm cannot install. Without them a
// run would fail ten minutes later in scattered tests; here it either installs them (as root, with apt-get,
// saying so in one line) or stops at once with one line naming what to install.
//
//   node scripts/testPrerequisites.mjs
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * @typedef {{ readonly name: string, readonly debianPackage: string, readonly present: (probe: Probe) => boolean }} Prerequisite
 * @typedef {{ readonly onPath: (command: string) => boolean, readonly exists: (file: string) => boolean }} Probe
 */

/** What the tests run besides Node and the npm packages (test/support/redis.ts, test/console/browser.ts, process tests). */
/** @type {ReadonlyArray<Prerequisite>} */
export const prerequisites = [
  { name: "redis-server", debianPackage: "redis-server", present: (probe) => probe.onPath("redis-server") },
  // The browser tests drive Debian's Chromium at this path (playwright-core's own download cannot work here).
  { name: "Chromium (/usr/bin/chromium)", debianPackage: "chromium", present: (probe) => probe.exists("/usr/bin/chromium") },
  { name: "ps", debianPackage: "procps", present: (probe) => probe.onPath("ps") }
]

/** @type {Probe} */
export const systemProbe = {
  onPath: (command) =>
    (process.env.PATH ?? "").split(path.delimiter).some((dir) => {
      if (dir === "") return false
      try {
        fs.accessSync(path.join(dir, command), fs.constants.X_OK)
        return true
      } catch {
        return false
      }
    }),
  exists: (file) => fs.existsSync(file)
}

/**
 * What to do about the missing prerequisites: nothing, install them (root with apt-get), or stop with one line.
 * @param {ReadonlyArray<Prerequisite>} missing
 * @param {{ readonly isRoot: boolean, readonly hasAptGet: boolean }} machine
 * @returns {{ readonly action: "none" } | { readonly action: "install", readonly packages: ReadonlyArray<string>, readonly line: string } | { readonly action: "stop", readonly line: string }}
 */
export const planFor = (missing, machine) => {
  if (missing.length === 0) return { action: "none" }
  const names = missing.map((p) => p.name).join(", ")
  const packages = missing.map((p) => p.debianPackage)
  if (machine.isRoot && machine.hasAptGet) {
    return { action: "install", packages, line: `npm test: installing ${packages.join(" ")} with apt-get (the tests need ${names}; npm cannot install them)` }
  }
  const how = machine.hasAptGet
    ? `sudo apt-get install -y ${packages.join(" ")}`
    : `your system's packages (Debian: ${packages.join(" ")})`
  return { action: "stop", line: `npm test needs ${names}, which npm cannot install: install ${missing.length === 1 ? "it" : "them"} with ${how}, then run npm test again` }
}

/** apt-get quietly; its own errors go to stderr. */
const aptGet = (args) =>
  spawnSync("apt-get", ["-y", "-qq", ...args], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  }).status === 0

const main = () => {
  const missing = prerequisites.filter((p) => !p.present(systemProbe))
  const plan = planFor(missing, { isRoot: process.getuid?.() === 0, hasAptGet: systemProbe.onPath("apt-get") })
  if (plan.action === "none") return 0
  process.stderr.write(`${plan.line}\n`)
  if (plan.action === "stop") return 1
  // A fresh machine has no package lists yet; the install needs them.
  const installed = aptGet(["update"]) && aptGet(["install", ...plan.packages])
  const stillMissing = prerequisites.filter((p) => !p.present(systemProbe))
  if (!installed || stillMissing.length > 0) {
    process.stderr.write(`npm test: apt-get could not install ${stillMissing.map((p) => p.debianPackage).join(" ") || plan.packages.join(" ")}; install it by hand and run npm test again\n`)
    return 1
  }
  return 0
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main()
