import { Context, Data, Effect, Layer, Option, Redacted, Schema } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { AppConfig } from "../config"

export class LocalSecretsError extends Data.TaggedError("LocalSecretsError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

const SecretsFile = Schema.Struct({
  postgresPassword: Schema.String,
  adminToken: Schema.String
})

/**
 * Secrets the single-instance setup keeps under DATA_DIR (mode 0600): the embedded database's
 * password and the generated admin token. Multi-instance deployments set ADMIN_TOKEN and
 * DATABASE_URL instead, and these are then unused.
 */
export class LocalSecrets extends Context.Tag("LocalSecrets")<LocalSecrets, {
  readonly postgresPassword: Redacted.Redacted
  readonly adminToken: Redacted.Redacted
}>() {
  static readonly layer = Layer.effect(
    LocalSecrets,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const file = path.join(config.dataDir, "secrets.json")
      const existing = yield* Effect.try({
        try: () => (fs.existsSync(file) ? Option.some(fs.readFileSync(file, "utf8")) : Option.none()),
        catch: (cause) => new LocalSecretsError({ message: `cannot read ${file}`, cause })
      })
      if (Option.isSome(existing)) {
        const parsed = yield* Schema.decodeUnknown(Schema.parseJson(SecretsFile))(existing.value).pipe(
          Effect.mapError((cause) => new LocalSecretsError({ message: `${file} is not valid; remove it to regenerate`, cause }))
        )
        return { postgresPassword: Redacted.make(parsed.postgresPassword), adminToken: Redacted.make(parsed.adminToken) }
      }
      const fresh = {
        postgresPassword: crypto.randomBytes(24).toString("base64url"),
        adminToken: `wsadm_${crypto.randomBytes(32).toString("base64url")}`
      }
      yield* Effect.try({
        try: () => {
          fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o755 })
          fs.writeFileSync(file, JSON.stringify(fresh, null, 2), { mode: 0o600, flag: "wx" })
        },
        catch: (cause) => new LocalSecretsError({ message: `cannot write ${file}`, cause })
      })
      if (Option.isNone(config.adminToken)) {
        // Printed once, when generated; afterwards it is only in the file.
        yield* Effect.logWarning("ADMIN_TOKEN is not set: generated one and saved it").pipe(
          Effect.annotateLogs({ adminToken: fresh.adminToken, file })
        )
      }
      return { postgresPassword: Redacted.make(fresh.postgresPassword), adminToken: Redacted.make(fresh.adminToken) }
    })
  )
}
