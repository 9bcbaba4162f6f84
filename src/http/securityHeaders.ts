import type * as http from "node:http"

/**
 * Headers on every answer, whichever app writes it: no content sniffing, no framing (the docs page
 * included). The forwarding lane writes them in its own single `writeHead` (forwardingLane.ts); the
 * HttpApi app's answers get them set on the Node response before it runs.
 */
export const securityHeaders: Readonly<Record<string, string>> = { "x-content-type-options": "nosniff", "x-frame-options": "DENY" }

/**
 * Sets the security headers on a response the HttpApi app answers. Answers of the admin API and the exports
 * carry secrets (a key shown once, signed links): never stored by a cache either. (The lane's paths,
 * `/<provider>/<region>/…`, are never among those.)
 */
export const setSecurityHeaders = (request: http.IncomingMessage, response: http.ServerResponse, secretPaths: RegExp): void => {
  response.setHeader("x-content-type-options", "nosniff")
  response.setHeader("x-frame-options", "DENY")
  if (request.url !== undefined && secretPaths.test(request.url)) response.setHeader("cache-control", "no-store")
}
