import { Effect } from "effect"

/**
 * A one-line progress bar on stderr: redrawn in place on a terminal, one line per tenth otherwise
 * (logs and tests stay readable).
 */
export const makeProgressBar = (label: string) => {
  const interactive = process.stderr.isTTY === true
  let lastTenth = -1
  return {
    update: (done: number, total: number, detail: string) =>
      Effect.sync(() => {
        const fraction = total === 0 ? 1 : Math.min(1, done / total)
        const filled = Math.round(fraction * 30)
        const line = `${label} [${"#".repeat(filled)}${"-".repeat(30 - filled)}] ${Math.floor(fraction * 100)}% ${detail}`
        if (interactive) process.stderr.write(`\r${line}\u001b[K`)
        else if (Math.floor(fraction * 10) > lastTenth) {
          lastTenth = Math.floor(fraction * 10)
          process.stderr.write(`${line}\n`)
        }
      }),
    done: Effect.sync(() => {
      if (interactive) process.stderr.write("\n")
    })
  }
}
