import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Folders made by `tempDir` in this test file, removed after it (test/support/tempDirs.setup.ts). */
const made = new Set<string>()

/**
 * A fresh folder under the temporary folder (`<prefix>XXXXXX`), removed with everything in it once the
 * test file has run (after its own afterAll hooks, so services and processes using it have stopped).
 */
export const tempDir = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  made.add(dir)
  return dir
}

/** Removes a folder `tempDir` made now (a test that needs it gone earlier); it is not removed twice. */
export const removeTempDir = (dir: string): void => {
  made.delete(dir)
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
}

/** Removes every folder made in this test file; what cannot be removed is named (the run's check reports it). */
export const removeTempDirs = (): void => {
  for (const dir of [...made]) {
    try {
      removeTempDir(dir)
    } catch (error) {
      process.stderr.write(`cannot remove the test folder ${dir}: ${error instanceof Error ? error.message : String(error)}\n`)
    }
  }
}
