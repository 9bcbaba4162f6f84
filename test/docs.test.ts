/**
 * The README and docs/ are read by people trying the service for the first time: their links must
 * lead somewhere, their model names must be ones the service accepts, and their event examples must
 * be batches the service takes.
 */
import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { validateEventBatch } from "../src/api/schemas/events"
import { EXPORT_KINDS, layoutMarkdown } from "../src/domain/exportLayouts"
import { builtInCatalog, MODEL_CATALOG } from "../src/domain/models"

const root = path.resolve(import.meta.dirname, "..")
const docsDir = path.join(root, "docs")
const pages = ["README.md", ...fs.readdirSync(docsDir).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]
const read = (page: string) => fs.readFileSync(path.join(root, page), "utf8")

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")

const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const withoutFences = markdown.replace(/```[\s\S]*?```/g, "")
  return new Set([...withoutFences.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!)))
}

/** `[text](target)` links outside code, relative ones only. */
const relativeLinks = (markdown: string): ReadonlyArray<string> =>
  [...markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target))

const codeBlocks = (markdown: string, language: string): ReadonlyArray<string> =>
  [...markdown.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!)

describe("README and docs/", () => {
  it("link only to files and headings that exist", () => {
    const broken: Array<string> = []
    for (const page of pages) {
      for (const link of relativeLinks(read(page))) {
        const [file, anchor] = link.split("#") as [string, string | undefined]
        const target = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file))
        if (!fs.existsSync(path.join(root, target))) broken.push(`${page}: ${link} (no file ${target})`)
        else if (anchor !== undefined && target.endsWith(".md") && !anchorsOf(read(target)).has(anchor)) {
          broken.push(`${page}: ${link} (no heading #${anchor} in ${target})`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("name no document that is not in the repository", () => {
    for (const page of pages) {
      const text = read(page)
      expect(text, page).not.toMatch(/DESIGN\.md/)
      expect(text, page).not.toMatch(/\bthe spec\b/i)
    }
  })

  it("README: the models table lists exactly the catalog, family by family", () => {
    const readme = read("README.md")
    const rows = new Map(
      [...readme.matchAll(/^\| (chat completions|embeddings|messages|FIM) \|.*\| ([^|]+) \|$/gm)].map((m) => [
        m[1]!,
        [...m[2]!.matchAll(/`([^`]+)`/g)].map((id) => id[1]!)
      ])
    )
    expect(rows.get("chat completions")).toEqual(builtInCatalog.ids("provider_a", "chat_completions"))
    expect(rows.get("embeddings")).toEqual(builtInCatalog.ids("provider_a", "embeddings"))
    expect(rows.get("messages")).toEqual(builtInCatalog.ids("provider_b", "messages"))
    expect(rows.get("FIM")).toEqual(builtInCatalog.ids("provider_c", "fim"))
  })

  it("README: the first requests use models of the catalog and the service's paths", () => {
    const readme = read("README.md")
    const examples = [...codeBlocks(readme, "sh"), ...codeBlocks(readme, "ts")]
    expect(examples.length).toBeGreaterThanOrEqual(4)
    const known = new Set(MODEL_CATALOG.map((m) => m.id))
    for (const example of examples) {
      const models = [...example.matchAll(/"?model"?: "([^"]+)"/g)].map((m) => m[1]!)
      expect(models.length, example).toBeGreaterThan(0)
      for (const model of models) expect(known, example).toContain(model)
      for (const url of example.matchAll(/http:\/\/127\.0\.0\.1:8080(\/[^"\s]*)/g)) {
        expect(url[1], example).toMatch(/^\/provider_(a\/(eu|us)\/v1|b\/(eu|us)|c\/eu)(\/|$)/)
      }
    }
  })

  it("docs/events.md: every example batch is one the service accepts", () => {
    const batches = codeBlocks(read("docs/events.md"), "json")
      .map((block) => JSON.parse(block) as unknown)
      .filter((body): body is { events: unknown } => typeof body === "object" && body !== null && "events" in body)
    expect(batches.length).toBe(2)
    for (const batch of batches) expect(Either.isRight(validateEventBatch(batch)), JSON.stringify(batch)).toBe(true)
  })

  it("docs/exports.md: each CSV layout is the one the service writes", () => {
    const exportsPage = read("docs/exports.md")
    for (const kind of EXPORT_KINDS) expect(exportsPage, kind).toContain(layoutMarkdown(kind))
  })
})
