// Imported only when GET /docs is first asked for (src/http/server.ts, DocsLive): the Swagger UI page carries
// megabytes of script, 7-9 MB of an idle service's memory when it was built at start-up (bench/RESULTS.md,
// "Footprint: issue 25"). The page is the platform's own, made from the API's contract as before; its
// Content-Security-Policy is added by src/http/docsPage.ts.
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import { HttpApi, HttpApiBuilder, type HttpRouter } from "@effect/platform"
import { Chunk, Context, Effect, Layer, Option, Scope } from "effect"
import { docsPath } from "./docsPage"

/** The route's handler of the platform's Swagger UI layer, made over the given API (kept for the process's life). */
export const swaggerHandler = (api: Context.Tag.Service<HttpApi.Api>) =>
  Effect.gen(function*() {
    const layer = Layer.provideMerge(HttpApiSwagger.layer({ path: docsPath }), HttpApiBuilder.Router.Live).pipe(
      Layer.provide(Layer.succeed(HttpApi.Api, api))
    )
    const context = yield* Layer.buildWithScope(layer, yield* Scope.make())
    const router = yield* Context.get(context, HttpApiBuilder.Router).router
    const route = Chunk.findFirst(router.routes, (candidate) => candidate.path === docsPath)
    return Option.match(route, {
      onNone: (): HttpRouter.Route.Handler<never, never> => Effect.die("the Swagger UI layer made no /docs route"),
      onSome: (found) => found.handler
    })
  })
