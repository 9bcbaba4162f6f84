// `npm run bench:tokenizer`: the service's token counting (src/services/forwarding/Tokenizer.ts: the rank tables packed by the
// build, our byte-pair merge) against gpt-tokenizer's own (its tables as Maps of strings), side by side in one
// process: memory each table costs once loaded (ours: its file, read as one buffer; gpt-tokenizer's: the heap it
// adds, after a full collection), the time to load it, and the time to count a short prompt (the hot
// path of every chat completion and embeddings request) and 32 KiB slices of long texts (what a large body costs a
// turn of the event loop). Same counts required of both. Prints a Markdown table; BENCH_WRITE=1 writes it into
// bench/RESULTS.md ("Tokenizer").
import { GptEncoding } from "gpt-tokenizer/GptEncoding"
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeBytePairCounter } from "../../src/domain/bytePairCount"
import { openRankTable, packRanks, type RankEntry } from "../../src/domain/rankTable"
import { writeSection } from "../results"

const root = path.resolve(import.meta.dirname, "../..")
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc (npm run bench:tokenizer does)")

const memoryMb = () => {
  gc()
  const { external, heapUsed } = process.memoryUsage()
  return (external + heapUsed) / 2 ** 20
}

/** Microseconds a call of `count`, the median of five rounds of `times` calls. */
const perCallUs = (count: () => number, times: number): number => {
  const rounds = Array.from({ length: 5 }, () => {
    const started = performance.now()
    for (let i = 0; i < times; i++) count()
    return ((performance.now() - started) * 1000) / times
  }).sort((a, b) => a - b)
  return rounds[2]!
}

const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}
const random = seeded(5)
const texts = {
  "short prompt": JSON.stringify({ role: "user", content: "Say something short. [simulator output_tokens=20 chunk_tokens=1]" }),
  "32 KiB of prose": fs.readFileSync(path.join(root, "README.md"), "utf8").slice(0, 32 * 1024),
  "32 KiB of one letter": "a".repeat(32 * 1024),
  "32 KiB of random letters": Array.from({ length: 32 * 1024 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join("")
}

const rows: Array<string> = []
for (const [encoding, pattern] of [["o200k_base", O200K_TOKEN_SPLIT_REGEX], ["cl100k_base", CL100K_TOKEN_SPLIT_REGEX]] as const) {
  const source = (await import(`gpt-tokenizer/bpeRanks/${encoding}`)).default as Array<string | Array<number>>
  // Each loaded as the service loads it: ours, the packed file the build writes; gpt-tokenizer's, its table parsed
  // from JSON (what the service did before: the table stays referenced by the encoder).
  const packedFile = path.join(root, "dist/tokenizer", `${encoding}.ranks`)
  if (!fs.existsSync(packedFile)) fs.writeFileSync(packedFile, packRanks(source as ReadonlyArray<RankEntry>))
  const json = JSON.stringify(source)

  let started = performance.now()
  const packed = fs.readFileSync(packedFile)
  const ours = makeBytePairCounter(openRankTable(packed)!, pattern)
  const oursLoadMs = performance.now() - started
  // All of it is the one buffer read from the file.
  const oursMb = packed.length / 2 ** 20

  const before = memoryMb()
  started = performance.now()
  const theirs = GptEncoding.getEncodingApi(encoding, () => JSON.parse(json) as Array<string | Array<number>>)
  const theirsLoadMs = performance.now() - started
  const theirsMb = memoryMb() - before

  for (const [name, text] of Object.entries(texts)) {
    const expected = theirs.countTokens(text)
    if (ours.count(text) !== expected) throw new Error(`${encoding}, ${name}: ${ours.count(text)} tokens counted, gpt-tokenizer ${expected}`)
    const short = text.length < 1000
    // A short prompt is counted again and again (each side remembers its pieces, as in the service); a long text is
    // new each time (gpt-tokenizer's cache of merged pieces cleared: an attacker's text is never the same twice).
    const times = short ? 20_000 : name.includes("prose") ? 50 : 3
    const [a, b] = [
      perCallUs(() => ours.count(text), times),
      perCallUs(() => (short ? undefined : theirs.clearMergeCache(), theirs.countTokens(text)), times)
    ]
    const unit = short ? (us: number) => `${us.toFixed(1)} µs` : (us: number) => `${(us / 1000).toFixed(1)} ms`
    rows.push(`| ${encoding} | ${name} (${expected} tokens) | ${unit(a)} | ${unit(b)} | ${(a / b).toFixed(2)}× |`)
  }
  rows.push(`| ${encoding} | memory once loaded / time to load | ${oursMb.toFixed(1)} MB / ${oursLoadMs.toFixed(1)} ms | ${theirsMb.toFixed(1)} MB / ${theirsLoadMs.toFixed(0)} ms | |`)
}

const body = `Date: ${new Date().toISOString().slice(0, 10)}. Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "cpu"}, Node ${process.version}.
\`npm run bench:tokenizer\`: both in one process, each figure the median of five rounds (same counts required).

| encoding | what | the service's (packed table) | gpt-tokenizer | ratio |
|---|---|---|---|---|
${rows.join("\n")}
`
console.log(body)
if (process.env.BENCH_WRITE === "1") writeSection("Tokenizer", body)
