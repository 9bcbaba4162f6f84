// Loaded into a spawned service (node --expose-gc --import this, with an IPC channel) to tell the test how many
// HTTP server responses (the service's and its in-process simulator's) are still alive after a full collection:
// a request is leaked when its response outlives it. Plain JavaScript: loaded by node itself.
import { subscribe } from "node:diagnostics_channel"

let alive = 0
const collected = new FinalizationRegistry(() => void alive--)
subscribe("http.server.request.start", ({ response }) => {
  alive++
  collected.register(response, undefined)
})

const collect = () => new Promise((resolve) => setTimeout(resolve, 50)).then(() => globalThis.gc())

process.on("message", async (message) => {
  if (message !== "count") return
  // Finalizers run after a collection, on a later turn: collect, let them run, and again.
  for (let i = 0; i < 3; i++) await collect()
  await new Promise((resolve) => setTimeout(resolve, 50))
  process.send({ alive })
})
// The channel must not keep the service alive.
process.channel?.unref()
