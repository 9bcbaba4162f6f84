import { Config, ConfigError, Effect, Either, Option, Record } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { RoutesSetting } from "./domain/deployments"
import {
  emptyRoutesSetting,
  readRoutesFile,
  type SecretReader,
  SecretUnavailable,
  type ServedRegions,
  type ShorthandUpstream,
  withShorthand
} from "./domain/routesFile"
import { providerDialects } from "./providers/provider"

/**
 * UPSTREAMS_FILE read at start-up (src/domain/routesFile.ts checks it), with the UPSTREAM_PROVIDER_* shorthand
 * for the routes it does not name. Reads are synchronous and once, like PRICE_TABLE_FILE's.
 */

/** The routes a file may name: each provider's regions. */
const servedRegions: ServedRegions = Record.map(providerDialects, (dialect) => dialect.regions)

const errorCode = (cause: unknown): string =>
  cause instanceof Error && "code" in cause ? String(cause.code) : "error"

/** The text of a file, or why not, as "cannot be read (ENOENT)". */
const readText = (file: string): Either.Either<string, string> =>
  Either.try({ try: () => fs.readFileSync(file, "utf8"), catch: (cause) => `cannot be read (${errorCode(cause)})` })

/**
 * Secrets from the environment (through the ConfigProvider, as every setting) or from files, relative paths
 * resolved against the routes file's folder; a file's content trimmed (a key file's final newline is no part
 * of the key).
 */
const secretReader = (folder: string): SecretReader => (ref) => {
  if ("env" in ref) {
    return Config.option(Config.string(ref.env)).pipe(
      Effect.mapError(() => new SecretUnavailable({ reason: `env ${ref.env} cannot be read` })),
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new SecretUnavailable({ reason: `env ${ref.env} is not set` })),
        onSome: (value) => value === "" ? Effect.fail(new SecretUnavailable({ reason: `env ${ref.env} is empty` })) : Effect.succeed(value)
      }))
    )
  }
  return Either.match(readText(path.resolve(folder, ref.file)), {
    onLeft: (problem) => Effect.fail(new SecretUnavailable({ reason: `file ${ref.file} ${problem}` })),
    onRight: (text) =>
      text.trim() === "" ? Effect.fail(new SecretUnavailable({ reason: `file ${ref.file} is empty` })) : Effect.succeed(text.trim())
  })
}

const invalid = (file: string, problem: string) => ConfigError.InvalidData([], `UPSTREAMS_FILE ${file}: ${problem}`)

/** The parser imported here, with the file: a service without one never loads the YAML package. */
const fromFile = (name: string): Effect.Effect<RoutesSetting, ConfigError.ConfigError> => {
  const file = path.resolve(name)
  return Either.match(readText(file), {
    onLeft: (problem) => Effect.fail(invalid(file, problem)),
    onRight: (text) =>
      Effect.promise(() => import("./routesFileParser")).pipe(
        Effect.flatMap((parser) => readRoutesFile(parser.parseRoutesFile(text), servedRegions, secretReader(path.dirname(file)))),
        Effect.mapError((refused) => invalid(file, refused.problem))
      )
  })
}

/**
 * The routes: UPSTREAMS_FILE's, and one native deployment per shorthand route the file does not name. Routes
 * named by neither are absent (the simulator serves them). Fails with one line naming the file, route and
 * deployment.
 */
export const upstreamRoutes = (shorthand: ReadonlyArray<ShorthandUpstream>): Effect.Effect<RoutesSetting, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const name = yield* Config.option(Config.nonEmptyString("UPSTREAMS_FILE"))
    const setting = yield* Option.match(name, { onNone: () => Effect.succeed(emptyRoutesSetting), onSome: fromFile })
    return yield* Either.mapLeft(withShorthand(setting, shorthand), (refused) =>
      invalid(Option.match(name, { onNone: () => "", onSome: (file) => path.resolve(file) }), refused.problem))
  })
