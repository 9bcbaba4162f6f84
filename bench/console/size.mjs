#!/usr/bin/env node
// The web console's first-load size: every script and stylesheet index.html loads (and modulepreloads), raw
// and gzipped (level 9, what a server or CDN would send), from the build in dist/web. Run after
// `node scripts/build.mjs` (npm start and npm test build it); prints a Markdown table.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const web = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/web")
const html = fs.readFileSync(path.join(web, "index.html"), "utf8")
const loaded = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.(?:js|css))"/g)].map((match) => match[1])

// Chunks the entry imports statically are part of the first load too (Vite lists them as modulepreload links).
const rows = loaded.map((file) => {
  const body = fs.readFileSync(path.join(web, file))
  return { file, raw: body.length, gzip: gzipSync(body, { level: 9 }).length }
})
const sum = (kind, key) => rows.filter((r) => r.file.endsWith(kind)).reduce((total, r) => total + r[key], 0)
const kb = (bytes) => (bytes / 1024).toFixed(1)

console.log("| file | raw (KiB) | gzip -9 (KiB) |")
console.log("|---|---|---|")
for (const r of rows) console.log(`| ${r.file} | ${kb(r.raw)} | ${kb(r.gzip)} |`)
console.log(`| **JavaScript, first load** | ${kb(sum(".js", "raw"))} | **${kb(sum(".js", "gzip"))}** |`)
console.log(`| CSS, first load | ${kb(sum(".css", "raw"))} | ${kb(sum(".css", "gzip"))} |`)
const lazy = fs.readdirSync(path.join(web, "assets")).filter((f) => f.endsWith(".js") && !loaded.includes(`assets/${f}`))
console.log(`\nLoaded later (lazy chunks): ${lazy.length === 0 ? "none" : lazy.join(", ")}`)
