import { HttpServerRequest, HttpServerResponse, type HttpApp } from "@effect/platform"
import { Effect } from "effect"
import * as crypto from "node:crypto"

/** Where the API reference page is served, below BASE_PATH (HttpApiSwagger's page, src/http/swaggerPage.ts). */
export const docsPath = "/docs"

const sha256 = (text: string): string => `'sha256-${crypto.createHash("sha256").update(text, "utf8").digest("base64")}'`

/**
 * The policy of the docs page: it is one HTML file whose script (the Swagger UI bundle and its start) and
 * style are inline, so exactly those are allowed, by their hashes — no 'unsafe-inline', nothing from
 * elsewhere. The OpenAPI document sits in a JSON data block, which is not a script. "Try it out" calls
 * the service itself (connect-src 'self'); the UI's icons are data: images.
 */
export const docsContentSecurityPolicy = (html: string): string => {
  // Executable inline scripts: a <script> without src whose type is none or JavaScript.
  const scripts = [...html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/g)]
    .filter(([, attributes = ""]) => !/\bsrc=/.test(attributes) && !/\btype="application\/json"/.test(attributes))
    .map(([, , body = ""]) => sha256(body))
  const styles = [...html.matchAll(/<style(?:\s[^>]*)?>([\s\S]*?)<\/style>/g)].map(([, body = ""]) => sha256(body))
  return [
    "default-src 'none'",
    `script-src ${scripts.join(" ") || "'none'"}`,
    `style-src ${styles.join(" ") || "'none'"}`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/**
 * Adds the docs page's Content-Security-Policy to its answer (the page is built by the platform's
 * HttpApiSwagger, which sets none). The page is made once, on its first request (src/http/swaggerPage.ts), so
 * its policy is computed once, then.
 */
export const withDocsPolicy = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> => {
  let policy: string | undefined
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if ((request.url.split("?")[0] ?? "") !== docsPath) return app
    return Effect.map(app, (response) => {
      if (response.status !== 200 || response.body._tag !== "Uint8Array") return response
      policy ??= docsContentSecurityPolicy(new TextDecoder().decode(response.body.body))
      return HttpServerResponse.setHeaders(response, { "content-security-policy": policy, "referrer-policy": "no-referrer" })
    })
  })
}
