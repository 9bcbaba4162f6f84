import { HttpRouter, HttpServerError, HttpServerResponse, type HttpApp } from "@effect/platform"
import { Effect } from "effect"
import { noEndpoint } from "../api/requestProblems"
import { wireError } from "../api/errors/errorFormat"

/**
 * The app mounted at BASE_PATH. A request outside it (a probe, `/favicon.ico`) is answered here, as the 404
 * it is, in the admin API's error format: left to the router it ended as a failure, which the access log
 * and /metrics counted as 500 (and the shipped 5xx alert fired on scanners).
 */
export const mountAtBasePath = <E, R>(basePath: string, app: HttpApp.Default<E, R>) => {
  if (!isRooted(basePath)) return app
  return HttpRouter.empty.pipe(HttpRouter.mountApp(basePath, app)).pipe(
    Effect.catchIf(
      (error): error is HttpServerError.RouteNotFound => error instanceof HttpServerError.RouteNotFound,
      (notFound) => {
        const { status, body } = wireError("admin", noEndpoint(notFound.request.method, notFound.request.url))
        return Effect.succeed(HttpServerResponse.text(body, { status, contentType: "application/json" }))
      }
    )
  )
}

/** BASE_PATH is empty or starts with a slash (config.ts checks it). */
const isRooted = (path: string): path is `/${string}` => path.startsWith("/")

/** Whether a request path lies under BASE_PATH (the path itself or below it). */
export const isUnderBasePath = (basePath: string, path: string): boolean =>
  basePath === "" || path === basePath || path.startsWith(`${basePath}/`) || path.startsWith(`${basePath}?`)
