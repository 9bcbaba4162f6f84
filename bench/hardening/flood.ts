export {}

// Sends oversized bodies (200,000 messages, about 9 MB) in a loop from FLOOD_CLIENTS clients until stopped;
// prints the statuses it got on SIGTERM.
const url = process.env.FLOOD_URL!
const key = process.env.FLOOD_KEY!
const clients = Number(process.env.FLOOD_CLIENTS ?? "4")
const messages = Array.from({ length: 200_000 }, (_, i) => ({ role: "user", content: `hello there ${i}` }))
const body = Buffer.from(JSON.stringify({ model: "chatgen-4o", messages }))
console.log(`oversized body: ${(body.length / 1e6).toFixed(1)} MB, ${messages.length} messages`)
const statuses: Record<number, number> = {}
let running = true
process.on("SIGTERM", () => {
  running = false
  console.log(JSON.stringify(statuses))
  process.exit(0)
})
const loop = async () => {
  while (running) {
    const answer = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body })
    await answer.text()
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
  }
}
await Promise.all(Array.from({ length: clients }, loop))
