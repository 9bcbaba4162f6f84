import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const isRoot = process.getuid?.() === 0

const mountable = (): boolean => {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "ws-mount-probe-"))
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" })
    execFileSync("umount", [probe], { stdio: "ignore" })
    return true
  } catch {
    return false
  } finally {
    fs.rmSync(probe, { recursive: true, force: true })
  }
}

/** Whether this process may mount (root with the capability; not in an unprivileged container). */
export const canMount: boolean = isRoot && mountable()

/**
 * Whether a folder can be made to refuse writes here: root ignores file modes, so as root it takes a
 * read-only bind mount; any other user gets mode 0555.
 */
export const canMakeReadOnly: boolean = !isRoot || canMount

/**
 * Makes an existing folder refuse new files and writes (EROFS as root, EACCES otherwise) until the
 * returned function gives it back.
 */
export const makeReadOnly = (directory: string): (() => void) => {
  if (!isRoot) {
    fs.chmodSync(directory, 0o555)
    return () => fs.chmodSync(directory, 0o755)
  }
  execFileSync("mount", ["--bind", directory, directory])
  execFileSync("mount", ["-o", "remount,bind,ro", directory])
  let restored = false
  return () => {
    if (restored) return
    restored = true
    execFileSync("umount", [directory])
  }
}

export interface FullDisk {
  /** A folder on a filesystem of its own with no byte left. */
  readonly directory: string
  /** Frees space (the filler goes). */
  readonly free: () => void
  /** Unmounts the filesystem and removes the folder. */
  readonly remove: () => void
}

/** A small tmpfs, filled to the last byte: writes there fail with ENOSPC while new (empty) files can still be made. Needs `canMount`. */
export const fullDisk = (): FullDisk => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ws-full-disk-"))
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", directory])
  const filler = path.join(directory, "filler")
  const fd = fs.openSync(filler, "w")
  const block = Buffer.alloc(4096, 1)
  try {
    for (;;) fs.writeSync(fd, block)
  } catch {
    // ENOSPC: full.
  } finally {
    fs.closeSync(fd)
  }
  return {
    directory,
    free: () => fs.rmSync(filler, { force: true }),
    remove: () => {
      try {
        execFileSync("umount", [directory], { stdio: "ignore" })
      } catch {
        // Still busy (a descriptor not closed yet): detached now, gone once it is closed.
        execFileSync("umount", ["-l", directory])
      }
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }
}
