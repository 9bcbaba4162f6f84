import { Context, Data, Effect, Layer, LogLevel, Logger, Option, Redacted, Schema } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { AppConfig } from "../config"

export class LocalSecretsFailure extends Data.TaggedError("LocalSecretsFailure")<{
  readonly message: string
  readonly cause?: unknown
}> {}

const SecretsFile = Schema.Struct({
  postgresPassword: Schema.String,
  adminToken: Schema.String,
  /** Whether the operator was shown the admin token (it is shown once, when first used). */
  adminTokenShown: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
type SecretsFile = typeof SecretsFile.Type

/**
 * Secrets the single-instance setup keeps under DATA_DIR (mode 0600): the embedded database's
 * password and the generated admin token. Read, or created, only when one of them is needed: a
 * deployment with DATABASE_URL and ADMIN_TOKEN never touches DATA_DIR for them.
 */
export class LocalSecrets extends Context.Tag("LocalSecrets")<LocalSecrets, {
  readonly postgresPassword: Effect.Effect<Redacted.Redacted, LocalSecretsFailure>
  /** The generated admin token, shown to the operator in the log the first time it is used. */
  readonly adminToken: Effect.Effect<Redacted.Redacted, LocalSecretsFailure>
}>() {
  static readonly layer = Layer.effect(
    LocalSecrets,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const file = path.join(config.dataDir, "secrets.json")

      const write = (secrets: SecretsFile, flag: "wx" | "w") =>
        Effect.try({
          try: () => {
            fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o755 })
            fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag })
          },
          catch: (cause) => new LocalSecretsFailure({ message: `cannot write ${file}`, cause })
        })

      const readOrCreate = Effect.gen(function*() {
        const existing = yield* Effect.try({
          try: () => (fs.existsSync(file) ? Option.some(fs.readFileSync(file, "utf8")) : Option.none()),
          catch: (cause) => new LocalSecretsFailure({ message: `cannot read ${file}`, cause })
        })
        if (Option.isSome(existing)) {
          return yield* Schema.decodeUnknown(Schema.parseJson(SecretsFile))(existing.value).pipe(
            Effect.mapError((cause) => new LocalSecretsFailure({ message: `${file} is not valid; remove it to regenerate`, cause }))
          )
        }
        const fresh: SecretsFile = {
          postgresPassword: crypto.randomBytes(24).toString("base64url"),
          adminToken: `wsadm_${crypto.randomBytes(32).toString("base64url")}`,
          adminTokenShown: false
        }
        yield* write(fresh, "wx")
        return fresh
      })
      const secrets = yield* Effect.cached(readOrCreate)

      const adminToken = yield* Effect.cached(Effect.gen(function*() {
        const current = yield* secrets
        if (!current.adminTokenShown) {
          // Whatever LOG_LEVEL says: without this line the operator has no way in.
          yield* Effect.logWarning("ADMIN_TOKEN is not set: using the generated one saved in DATA_DIR (shown this once)").pipe(
            Effect.annotateLogs({ adminToken: current.adminToken, file }),
            Logger.withMinimumLogLevel(LogLevel.All)
          )
          yield* write({ ...current, adminTokenShown: true }, "w")
        }
        return Redacted.make(current.adminToken)
      }))

      return {
        postgresPassword: Effect.map(secrets, (s) => Redacted.make(s.postgresPassword)),
        adminToken
      }
    })
  )
}
