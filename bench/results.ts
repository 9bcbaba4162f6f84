import * as fs from "node:fs"
import * as path from "node:path"

const resultsFile = path.resolve(import.meta.dirname, "RESULTS.md")

/** Replaces (or appends) the section "## <title>" of bench/RESULTS.md, leaving the other benchmarks' sections alone. */
export const writeSection = (title: string, body: string): void => {
  const current = fs.existsSync(resultsFile) ? fs.readFileSync(resultsFile, "utf8") : "# Benchmark results\n"
  const heading = `## ${title}\n`
  const start = current.indexOf(heading)
  const section = `${heading}\n${body.trim()}\n\n`
  if (start === -1) {
    fs.writeFileSync(resultsFile, `${current.trimEnd()}\n\n${section}`)
    return
  }
  const next = current.indexOf("\n## ", start + heading.length)
  fs.writeFileSync(resultsFile, current.slice(0, start) + section + (next === -1 ? "" : current.slice(next + 1)))
}
