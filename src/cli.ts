import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { WorkspaceApi } from "./api/Api"
import { Scope } from "./domain/apiKey"
import { Budget } from "./domain/budgets"
import { ExpiryTime } from "./api/adminApi"
import { MemberRole } from "./domain/console"
import { providerIds } from "./domain/providerId"
import { ProviderIdSchema } from "./domain/providerIdSchema"
import { WorkspaceSettingsPatch } from "./domain/workspaceSettings"
import { cliClient, failureLine } from "./cli/adminCall"
import { exportCommand, seedCommand, UsageError, usageCommandOptions, usageCommandsHelp } from "./cli/usageCommands"

/**
 * Operator CLI. It talks to a running service through the admin API (the same validation, and no
 * second process on the embedded database). WORKSPACE_API_URL and ADMIN_TOKEN say where and how;
 * without them it uses http://127.0.0.1:$PORT$BASE_PATH and the token saved under DATA_DIR.
 */

const usage = `usage: npm run cli -- <command>

  workspace list [--search TEXT] [--limit N] [--cursor CURSOR]
  workspace create --name NAME [--settings JSON]
  workspace get WORKSPACE_ID
  workspace update WORKSPACE_ID [--name NAME] [--settings JSON]
  key create WORKSPACE_ID --name NAME --scopes USAGE_EXPORT_API,COMPLETION_API [--budget JSON] [--expires-at TIME]
  key update WORKSPACE_ID KEY_ID [--budget JSON|null] [--expires-at TIME|null]
      (budget: '{"amountUsd":50,"period":"day|week|month","alertThresholds":[0.8,1]}'; TIME: 2026-12-31T23:59:59Z;
       the workspace's budget: workspace update --settings '{"budget":{…}}')
  key list WORKSPACE_ID
  key revoke WORKSPACE_ID KEY_ID
  member invite WORKSPACE_ID --email EMAIL --role admin|member [--name NAME]   (again: a fresh link; never touches an existing account)
  member list WORKSPACE_ID
  member role WORKSPACE_ID MEMBER_ID --role admin|member
  member remove WORKSPACE_ID MEMBER_ID
  person reset-password --email EMAIL   (a one-time link, valid 1 hour, for the person to choose a new password)
  audit WORKSPACE_ID [--action ACTION] [--limit N] [--cursor CURSOR]
  provider-key set WORKSPACE_ID ${providerIds.join("|")} [--key-file FILE]   (the key from FILE or standard input, never an argument)
  provider-key list WORKSPACE_ID
  provider-key remove WORKSPACE_ID PROVIDER
  credentials rotate   (after a restart with the new CREDENTIALS_KEY and the old one as CREDENTIALS_KEY_PREVIOUS)
  upstreams   (every upstream deployment: available or cooling, last error, requests, failures; this instance's view)
${usageCommandsHelp}

environment: WORKSPACE_API_URL (default http://127.0.0.1:$PORT$BASE_PATH), ADMIN_TOKEN (default: DATA_DIR/secrets.json),
WORKSPACE_API_KEY (export's --key)`

const { positionals, values } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  strict: false,
  options: Object.fromEntries(
    ["name", "settings", "scopes", "budget", "expires-at", "search", "limit", "cursor", "email", "role", "action", "key-file", ...usageCommandOptions].map((name) => [name, { type: "string" as const }])
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

/** --budget and --expires-at: absent leaves them, `null` removes them. */
const decodeKeyLimits = (budget: string | undefined, expiresAt: string | undefined) =>
  Effect.all({
    budget: budget === undefined
      ? Effect.succeed(undefined)
      : Schema.decodeUnknown(Schema.parseJson(Schema.NullOr(Budget)))(budget).pipe(
        Effect.mapError((error) => new UsageError({ message: `--budget: ${error.message}` }))
      ),
    expiresAt: expiresAt === undefined
      ? Effect.succeed(undefined)
      : expiresAt === "null"
      ? Effect.succeed(null)
      : Schema.decodeUnknown(ExpiryTime)(expiresAt).pipe(
        Effect.mapError(() => new UsageError({ message: "--expires-at: an ISO 8601 time with its offset, such as 2026-12-31T23:59:59Z, or null" }))
      )
  }).pipe(Effect.map(({ budget, expiresAt }) => ({
    ...(budget === undefined ? {} : { budget }),
    ...(expiresAt === undefined ? {} : { expiresAt })
  })))

const decodeScopes = (raw: string) =>
  Schema.decodeUnknown(Schema.NonEmptyArray(Scope))(raw.split(",").map((s) => s.trim())).pipe(
    Effect.mapError(() => new UsageError({ message: "--scopes: a comma-separated list of USAGE_EXPORT_API, COMPLETION_API" }))
  )

const decodeRole = (raw: string | undefined) =>
  Schema.decodeUnknown(MemberRole)(raw).pipe(Effect.mapError(() => new UsageError({ message: "--role: admin or member" })))

const decodeProvider = (raw: string | undefined) =>
  Schema.decodeUnknown(ProviderIdSchema)(raw).pipe(
    Effect.mapError(() => new UsageError({ message: `PROVIDER: one of ${providerIds.join(", ")}\n\n${usage}` }))
  )

/**
 * A provider key is read from a file or standard input, never taken as an argument: arguments end up in
 * shell histories and in every process listing of the machine.
 */
const readProviderKey = (file: string | undefined) =>
  Effect.try({
    try: () => fs.readFileSync(file ?? 0, "utf8").trim(),
    catch: () => new UsageError({ message: `cannot read the provider key from ${file ?? "standard input"}` })
  }).pipe(
    Effect.filterOrFail(
      (key) => key !== "",
      () => new UsageError({ message: "no provider key given: pipe it in (… | npm run cli -- provider-key set …) or use --key-file" })
    )
  )

const decodeLimit = (raw: string | undefined) =>
  raw === undefined
    ? Effect.succeed(undefined)
    : /^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 200
    ? Effect.succeed(Number(raw))
    : Effect.fail(new UsageError({ message: "--limit: a whole number from 1 to 200" }))

/** Only the options given: the client sends no empty query parameters. */
const defined = <T extends Record<string, unknown>>(record: T): T =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T

const adminToken = Effect.sync(() => {
  if (process.env.ADMIN_TOKEN) return Either.right(process.env.ADMIN_TOKEN)
  const file = path.resolve(process.env.DATA_DIR ?? "./.data", "secrets.json")
  try {
    return Either.right((JSON.parse(fs.readFileSync(file, "utf8")) as { adminToken: string }).adminToken)
  } catch {
    return Either.left(new UsageError({ message: `ADMIN_TOKEN is not set and ${file} cannot be read` }))
  }
}).pipe(Effect.flatMap((either) => either))

const baseUrl = process.env.WORKSPACE_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}${process.env.BASE_PATH ?? ""}`

const program = Effect.gen(function*() {
  const token = yield* adminToken
  const client = yield* HttpApiClient.make(WorkspaceApi, {
    baseUrl,
    transformClient: (client) => cliClient(HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token)))
  })
  const [group, command, first, second] = positionals
  if (group === "seed") return yield* seedCommand({ baseUrl, adminToken: token, workspaceId: command, option })
  if (group === "export") {
    return yield* exportCommand({
      baseUrl,
      kind: command,
      option,
      operatorExport: (id, dataType, payload) => client.admin.runExport({ path: { id, dataType }, payload })
    })
  }
  if (group === "upstreams") return yield* client.admin.listUpstreams()
  if (group === "audit") {
    return yield* client.admin.audit({
      path: { id: yield* required(command, "WORKSPACE_ID") },
      urlParams: defined({ action: option("action"), limit: yield* decodeLimit(option("limit")), cursor: option("cursor") })
    })
  }
  switch (`${group} ${command}`) {
    case "workspace list":
      return yield* client.admin.listWorkspaces({
        urlParams: defined({ search: option("search"), limit: yield* decodeLimit(option("limit")), cursor: option("cursor") })
      })
    case "member invite": {
      const id = yield* required(first, "WORKSPACE_ID")
      const email = yield* required(option("email"), "--email")
      const role = yield* decodeRole(option("role"))
      const name = option("name")
      return yield* client.admin.inviteMember({ path: { id }, payload: { email, role, ...(name ? { name } : {}) } })
    }
    case "person reset-password":
      return yield* client.admin.passwordReset({ payload: { email: yield* required(option("email"), "--email") } })
    case "member list":
      return yield* client.admin.listMembers({ path: { id: yield* required(first, "WORKSPACE_ID") } })
    case "member role":
      return yield* client.admin.changeMember({
        path: { id: yield* required(first, "WORKSPACE_ID"), memberId: yield* required(second, "MEMBER_ID") },
        payload: { role: yield* decodeRole(option("role")) }
      })
    case "member remove":
      return yield* client.admin.removeMember({
        path: { id: yield* required(first, "WORKSPACE_ID"), memberId: yield* required(second, "MEMBER_ID") }
      })
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
      const limits = yield* decodeKeyLimits(option("budget"), option("expires-at"))
      return yield* client.admin.createApiKey({ path: { id }, payload: { name, scopes, ...limits } })
    }
    case "key update":
      return yield* client.admin.updateApiKey({
        path: { id: yield* required(first, "WORKSPACE_ID"), keyId: yield* required(second, "KEY_ID") },
        payload: yield* decodeKeyLimits(option("budget"), option("expires-at"))
      })
    case "key list":
      return yield* client.admin.listApiKeys({ path: { id: yield* required(first, "WORKSPACE_ID") } })
    case "key revoke":
      return yield* client.admin.revokeApiKey({
        path: { id: yield* required(first, "WORKSPACE_ID"), keyId: yield* required(second, "KEY_ID") }
      })
    case "provider-key set": {
      const id = yield* required(first, "WORKSPACE_ID")
      const provider = yield* decodeProvider(second)
      return yield* client.admin.setProviderKey({ path: { id, provider }, payload: { apiKey: yield* readProviderKey(option("key-file")) } })
    }
    case "provider-key list":
      return yield* client.admin.listProviderKeys({ path: { id: yield* required(first, "WORKSPACE_ID") } })
    case "provider-key remove":
      return yield* client.admin.removeProviderKey({ path: { id: yield* required(first, "WORKSPACE_ID"), provider: yield* decodeProvider(second) } })
    case "credentials rotate":
      return yield* client.admin.rotateCredentials()
    default:
      return yield* Effect.fail(new UsageError({ message: usage }))
  }
})

program.pipe(
  Effect.flatMap((result) => Console.log(JSON.stringify(result, null, 2))),
  // Printed once here; failing afterwards makes runMain exit with status 1 without printing again.
  Effect.tapError((error) =>
    Console.error(
      error._tag === "UsageError" || error._tag === "DownloadFailed"
        ? error.message
        // One line: what went wrong and what to check (URL, BASE_PATH, token), never a decoding tree.
        : failureLine(error, baseUrl) ?? `request failed: ${error._tag}`
    )
  ),
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
