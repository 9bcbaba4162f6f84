import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The repository's root folder (the nearest one above this module holding package.json), where sql/ and
 * config/ live. Found by walking up rather than by a fixed `../..`, because this module runs both from
 * src/ (tests, tsx) and bundled into dist/server/ (npm start), at different depths.
 */
export const projectRoot: string = (() => {
  const start = path.dirname(fileURLToPath(import.meta.url))
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir
    if (path.dirname(dir) === dir) return start
  }
})()
