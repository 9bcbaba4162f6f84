// Preloaded into the service (`node --import`) by the allocation benchmarks: samples every allocation, those the
// young generation's collections free included (which is most of a request's garbage), and writes the samples as
// a .heapprofile into ALLOCATION_PROFILE_DIR. With ALLOCATION_SAMPLING=signal, sampling starts at the first
// SIGUSR2 and the profile is written at the second (so that start-up is left out); otherwise it runs from start-up
// to exit. Bench only.
import * as fs from "node:fs"
import * as inspector from "node:inspector"
import * as path from "node:path"

const session = new inspector.Session()
session.connect()
const dir = process.env.ALLOCATION_PROFILE_DIR ?? "."

const begin = () =>
  session.post("HeapProfiler.startSampling", {
    samplingInterval: Number(process.env.ALLOCATION_SAMPLING_INTERVAL ?? "4096"),
    includeObjectsCollectedByMajorGC: true,
    // ALLOCATION_PROMOTED=1: only what survives the young generation (promoted, or still live), by where it was made.
    includeObjectsCollectedByMinorGC: process.env.ALLOCATION_PROMOTED !== "1"
  })

const end = (name) =>
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error !== null || result === undefined) return
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, name), JSON.stringify(result.profile))
  })

if (process.env.ALLOCATION_SAMPLING === "signal") {
  let sampling = false
  process.on("SIGUSR2", () => {
    if (sampling) end(process.env.ALLOCATION_PROFILE_NAME ?? `allocations-${process.pid}.heapprofile`)
    else begin()
    sampling = !sampling
  })
} else {
  begin()
  process.once("exit", () => end(`allocations-${process.pid}.heapprofile`))
}
