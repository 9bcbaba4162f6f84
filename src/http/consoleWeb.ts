import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { projectRoot } from "../projectRoot"

/** One built file of the web console, held in memory (the whole console is a few hundred KB). */
interface ConsoleFile {
  readonly body: Uint8Array
  readonly contentType: string
}

/** The built console: its files by path relative to dist/web ("index.html", "assets/index-3f2a.js"). */
export interface ConsoleAssets {
  readonly files: ReadonlyMap<string, ConsoleFile>
  /** Where the files were looked for, for the "not built" answer. */
  readonly directory: string
}

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8"
}

/**
 * Scripts and styles only from the service itself: no 'unsafe-inline', no CDN. Charts set element styles
 * through the CSSOM, which style-src does not restrict.
 */
export const consoleContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": consoleContentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // Invitation links carry their token in the path: never send it on as a referrer.
  "referrer-policy": "no-referrer"
}

/** Where scripts/build.mjs (its "web" step) writes the console's Vite build. */
const consoleDirectory = (): string => path.join(projectRoot, "dist", "web")

const listFiles = (root: string, prefix = ""): Array<string> =>
  fs.readdirSync(path.join(root, prefix), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(root, path.posix.join(prefix, entry.name)) : [path.posix.join(prefix, entry.name)]
  )

/** Reads the built console into memory once, at start-up. An unbuilt console is an empty set, not a failure. */
export const loadConsoleAssets: Effect.Effect<ConsoleAssets> = Effect.sync(() => {
  const directory = consoleDirectory()
  const files = new Map<string, ConsoleFile>()
  if (!fs.existsSync(path.join(directory, "index.html"))) return { files, directory }
  for (const name of listFiles(directory)) {
    files.set(name, {
      body: fs.readFileSync(path.join(directory, name)),
      contentType: contentTypes[path.extname(name)] ?? "application/octet-stream"
    })
  }
  return { files, directory }
})

/**
 * index.html with a <base> element naming where the console lives, so the relative asset URLs
 * Vite writes and the app's own routes resolve under any BASE_PATH and at any depth
 * (/console/invitations/{token}).
 */
const withBase = (html: Uint8Array, basePath: string): Uint8Array =>
  new TextEncoder().encode(
    new TextDecoder().decode(html).replace("<head>", `<head><base href="${escapeAttribute(basePath)}/console/">`)
  )

const escapeAttribute = (value: string): string =>
  value.replaceAll("&", "&amp;").replaceAll("\"", "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

const consolePrefix = "/console"

/** Whether a path (below BASE_PATH) belongs to the console's pages and files rather than to its JSON API. */
export const isConsolePath = (pathname: string): boolean =>
  (pathname === consolePrefix || pathname.startsWith(`${consolePrefix}/`)) &&
  pathname !== `${consolePrefix}/api` && !pathname.startsWith(`${consolePrefix}/api/`)

/**
 * Serves the console under /console/: its hashed assets immutable for a year, any other path the
 * single-page app's index.html (the app routes /console/login, /console/invitations/{token}, …).
 * Every other request goes to the API app unchanged.
 */
export const serveConsole = (assets: ConsoleAssets, basePath: string) => {
  const indexFile = assets.files.get("index.html")
  const index = indexFile === undefined ? undefined : withBase(indexFile.body, basePath)
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const pathname = decodeURIComponentSafe(request.url.split("?")[0] ?? "")
      if (!isConsolePath(pathname)) return app
      if (request.method !== "GET" && request.method !== "HEAD") {
        return Effect.succeed(HttpServerResponse.text("Method not allowed", { status: 405, headers: { allow: "GET, HEAD" } }))
      }
      if (pathname === consolePrefix) {
        return Effect.succeed(HttpServerResponse.empty({ status: 308, headers: { location: `${basePath}/console/` } }))
      }
      if (index === undefined) {
        return Effect.succeed(HttpServerResponse.text(
          `The web console is not built (no ${assets.directory}/index.html): run node scripts/build.mjs (npm start does).`,
          { status: 503 }
        ))
      }
      const relative = pathname.slice(`${consolePrefix}/`.length)
      const file = assets.files.get(relative)
      if (file !== undefined && relative !== "index.html") {
        const hashed = relative.startsWith("assets/")
        return Effect.succeed(HttpServerResponse.uint8Array(file.body, {
          contentType: file.contentType,
          headers: { ...securityHeaders, "cache-control": hashed ? "public, max-age=31536000, immutable" : "no-cache" }
        }))
      }
      // A missing hashed asset is a real 404 (an old page asking for a file of a previous build), not the app.
      if (relative.startsWith("assets/")) return Effect.succeed(HttpServerResponse.text("Not found", { status: 404 }))
      return Effect.succeed(HttpServerResponse.uint8Array(index, {
        contentType: "text/html; charset=utf-8",
        headers: { ...securityHeaders, "cache-control": "no-cache" }
      }))
    })
}

const decodeURIComponentSafe = (value: string): string => {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}
