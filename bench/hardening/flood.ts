export {}

// Sends oversized bodies in a loop from FLOOD_CLIENTS clients until stopped; prints the statuses it got on SIGTERM.
// FLOOD_SHAPE: "messages" (default: 200,000 messages, about 9 MB) or "one-message" (one message of 9 MB, to the chat
// completions and messages endpoints in turn: FLOOD_URL is then the service's base URL). FLOOD_KEYS: the keys the
// clients take in turn (comma-separated; FLOOD_KEY for one).
const url = process.env.FLOOD_URL!
const keys = (process.env.FLOOD_KEYS ?? process.env.FLOOD_KEY!).split(",")
const clients = Number(process.env.FLOOD_CLIENTS ?? "4")
const shape = process.env.FLOOD_SHAPE ?? "messages"

interface Target {
  readonly url: string
  readonly body: Buffer
  readonly headers: (key: string) => Record<string, string>
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" })

const targets: ReadonlyArray<Target> = shape === "one-message"
  ? [
    {
      url: `${url}/provider_a/us/v1/chat/completions`,
      body: Buffer.from(JSON.stringify({ model: "chatgen-4o", messages: [{ role: "user", content: "hello world ".repeat(786_432) }] })),
      headers: bearer
    },
    {
      url: `${url}/provider_b/us/v1/messages`,
      body: Buffer.from(JSON.stringify({
        model: "assistantmodel-sonnet-4-5-20250929",
        max_tokens: 16,
        messages: [{ role: "user", content: "a".repeat(9 * 1024 * 1024) }]
      })),
      headers: (key) => ({ ...bearer(key), "anthropic-version": "2023-06-01" })
    }
  ]
  : [{
    url,
    body: Buffer.from(JSON.stringify({ model: "chatgen-4o", messages: Array.from({ length: 200_000 }, (_, i) => ({ role: "user", content: `hello there ${i}` })) })),
    headers: bearer
  }]
console.log(`oversized bodies: ${targets.map((target) => `${(target.body.length / 1e6).toFixed(1)} MB to ${target.url}`).join(", ")}`)
const statuses: Record<string, number> = {}
let running = true
process.on("SIGTERM", () => {
  running = false
  console.log(JSON.stringify(statuses))
  process.exit(0)
})
const loop = async (client: number) => {
  const key = keys[client % keys.length]!
  for (let sent = 0; running; sent++) {
    const target = targets[(client + sent) % targets.length]!
    // A service that went down answers nothing: counted as "failed", after a pause.
    const status = await fetch(target.url, { method: "POST", headers: target.headers(key), body: target.body }).then(
      async (answer) => {
        await answer.text()
        return String(answer.status)
      },
      () => "failed"
    )
    statuses[status] = (statuses[status] ?? 0) + 1
    if (status === "failed") await new Promise((r) => setTimeout(r, 100))
  }
}
await Promise.all(Array.from({ length: clients }, (_, client) => loop(client)))
