import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { tempDir } from "../support/tempDirs"

const script = path.resolve(import.meta.dirname, "../../scripts/testPrerequisites.mjs")
const isRoot = process.getuid?.() === 0

/** A PATH of one folder holding only `node` (and what a test adds): no redis-server, no ps, no apt-get. */
const bareBin = (): string => {
  const dir = tempDir("ws-prereq-bin-")
  fs.symlinkSync(process.execPath, path.join(dir, "node"))
  return dir
}

const runWith = (bin: string) =>
  spawnSync(path.join(bin, "node"), [script], { env: { PATH: bin, HOME: os.tmpdir() }, encoding: "utf8", timeout: 20_000 })

const executable = (file: string, text: string) => {
  fs.writeFileSync(file, text)
  fs.chmodSync(file, 0o755)
}

describe("npm test's prerequisites (scripts/testPrerequisites.mjs)", () => {
  it("passes silently when everything is there", () => {
    const result = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 20_000 })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
  })

  it("without apt-get, stops at once with one line naming what to install", () => {
    const result = runWith(bareBin())
    expect(result.status).toBe(1)
    const lines = result.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^npm test needs redis-server, .*ps, which npm cannot install: install them with your system's packages \(Debian: redis-server .*procps\)/)
  })

  it("with apt-get, installs what is missing as root (saying so in one line), else names the apt-get command", () => {
    const bin = bareBin()
    const calls = path.join(bin, "apt-get.calls")
    // A stand-in apt-get that records its arguments and "installs" by creating the programs beside itself.
    executable(path.join(bin, "apt-get"), [
      "#!/bin/sh",
      "PATH=/usr/bin:/bin",
      `echo "$*" >> ${calls}`,
      `case "$*" in *install*) for p in redis-server ps; do printf '#!/bin/sh\\n' > ${bin}/$p; chmod +x ${bin}/$p; done ;; esac`
    ].join("\n") + "\n")
    const result = runWith(bin)
    const lines = result.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    if (isRoot) {
      expect(lines[0]).toMatch(/^npm test: installing redis-server .*procps with apt-get \(the tests need redis-server, .*ps; npm cannot install them\)$/)
      expect(fs.readFileSync(calls, "utf8").trim().split("\n")).toEqual([
        "-y -qq update",
        expect.stringMatching(/^-y -qq install redis-server .*procps$/)
      ])
      expect(result.status).toBe(0)
    } else {
      expect(lines[0]).toMatch(/install them with sudo apt-get install -y redis-server .*procps, then run npm test again$/)
      expect(fs.existsSync(calls)).toBe(false)
      expect(result.status).toBe(1)
    }
  })

  it.skipIf(!isRoot)("says so when apt-get fails", () => {
    const bin = bareBin()
    executable(path.join(bin, "apt-get"), "#!/bin/sh\nexit 100\n")
    const result = runWith(bin)
    expect(result.status).toBe(1)
    expect(result.stderr.trim().split("\n").at(-1)).toMatch(/^npm test: apt-get could not install redis-server .*procps; install it by hand/)
  })
})
