import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { WorkspaceApi } from "./api/Api"
import { Scope } from "./domain/apiKey"
import { WorkspaceSettingsPatch } from "./domain/workspaceSettings"
import { exportCommand, seedCommand, UsageError, usageCommandOptions, usageCommandsHelp } from "./cli/usageCommands"

/**
 * Operator CLI. It talks to a running service through the admin API (the same validation, and no
 * second process on the embedded database). WORKSPACE_API_URL and ADMIN_TOKEN say where and how;
 * without them it uses http://127.0.0.1:$PORT$BASE_PATH and the token saved under DATA_DIR.
 */

const usage = `usage: npm run cli -- <command>

  workspace create --name NAME [--settings JSON]
  workspace get WORKSPACE_ID
  workspace update WORKSPACE_ID [--name NAME] [--settings JSON]
  key create WORKSPACE_ID --name NAME --scopes USAGE_EXPORT_API,COMPLETION_API
  key list WORKSPACE_ID
  key revoke WORKSPACE_ID KEY_ID
${usageCommandsHelp}

environment: WORKSPACE_API_URL (default http://127.0.0.1:$PORT$BASE_PATH), ADMIN_TOKEN (default: DATA_DIR/secrets.json),
WORKSPACE_API_KEY (export's --key)`

const { positionals, values } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  strict: false,
  options: Object.fromEntries(
    ["name", "settings", "scopes", ...usageCommandOptions].map((name) => [name, { type: "string" as const }])
  )
})

const option = (key: string): string | undefined => {
  const value = values[key]
  return typeof value === "string" ? value : undefined
}

const required = (value: string | undefined, what: string) =>
  value === undefined || value === "" ? Effect.fail(new UsageError({ message: `missing ${what}\n\n${usage}` })) : Effect.succeed(value)

const decodeSettings = (raw: string | undefined) =>
  raw === undefined
    ? Effect.succeed(undefined)
    : Schema.decodeUnknown(Schema.parseJson(WorkspaceSettingsPatch))(raw).pipe(
      Effect.mapError((error) => new UsageError({ message: `--settings: ${error.message}` }))
    )

const decodeScopes = (raw: string) =>
  Schema.decodeUnknown(Schema.NonEmptyArray(Scope))(raw.split(",").map((s) => s.trim())).pipe(
    Effect.mapError(() => new UsageError({ message: "--scopes: a comma-separated list of USAGE_EXPORT_API, COMPLETION_API" }))
  )

const adminToken = Effect.sync(() => {
  if (process.env.ADMIN_TOKEN) return Either.right(process.env.ADMIN_TOKEN)
  const file = path.resolve(process.env.DATA_DIR ?? "./.data", "secrets.json")
  try {
    return Either.right((JSON.parse(fs.readFileSync(file, "utf8")) as { adminToken: string }).adminToken)
  } catch {
    return Either.left(new UsageError({ message: `ADMIN_TOKEN is not set and ${file} cannot be read` }))
  }
}).pipe(Effect.flatMap((either) => either))

const program = Effect.gen(function*() {
  const token = yield* adminToken
  const baseUrl = process.env.WORKSPACE_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}${process.env.BASE_PATH ?? ""}`
  const client = yield* HttpApiClient.make(WorkspaceApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
  })
  const [group, command, first, second] = positionals
  if (group === "seed") return yield* seedCommand({ baseUrl, adminToken: token, workspaceId: command, option })
  if (group === "export") {
    return yield* exportCommand({
      baseUrl,
      kind: command,
      option,
      temporaryKey: (id) =>
        Effect.map(
          client.admin.createApiKey({ path: { id }, payload: { name: "cli export (temporary)", scopes: ["USAGE_EXPORT_API"] } }),
          (created) => ({
            key: created.key,
            revoke: Effect.ignore(client.admin.revokeApiKey({ path: { id, keyId: created.id } }))
          })
        )
    })
  }
  switch (`${group} ${command}`) {
    case "workspace create": {
      const name = yield* required(option("name"), "--name")
      const settings = yield* decodeSettings(option("settings"))
      return yield* client.admin.createWorkspace({ payload: { name, ...(settings ? { settings } : {}) } })
    }
    case "workspace get":
      return yield* client.admin.getWorkspace({ path: { id: yield* required(first, "WORKSPACE_ID") } })
    case "workspace update": {
      const id = yield* required(first, "WORKSPACE_ID")
      const settings = yield* decodeSettings(option("settings"))
      const name = option("name")
      return yield* client.admin.updateWorkspace({ path: { id }, payload: { ...(name ? { name } : {}), ...(settings ? { settings } : {}) } })
    }
    case "key create": {
      const id = yield* required(first, "WORKSPACE_ID")
      const name = yield* required(option("name"), "--name")
      const scopes = yield* decodeScopes(yield* required(option("scopes"), "--scopes"))
      return yield* client.admin.createApiKey({ path: { id }, payload: { name, scopes } })
    }
    case "key list":
      return yield* client.admin.listApiKeys({ path: { id: yield* required(first, "WORKSPACE_ID") } })
    case "key revoke":
      return yield* client.admin.revokeApiKey({
        path: { id: yield* required(first, "WORKSPACE_ID"), keyId: yield* required(second, "KEY_ID") }
      })
    default:
      return yield* Effect.fail(new UsageError({ message: usage }))
  }
})

program.pipe(
  Effect.flatMap((result) => Console.log(JSON.stringify(result, null, 2))),
  // Printed once here; failing afterwards makes runMain exit with status 1 without printing again.
  Effect.tapError((error) =>
    Console.error(
        error._tag === "UsageError"
          ? error.message
          : "status" in error && "message" in error
          ? `${error.status}: ${error.message}`
          : "message" in error && typeof error.message === "string"
          ? error.message
          : `request failed: ${error._tag}`
    )
  ),
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
