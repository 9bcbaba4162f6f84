import { Clock, ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { afterAll, beforeAll } from "vitest"
import { appWith, StoresLive } from "../../src/appLayer"
import { AppConfig } from "../../src/config"
import { downloadUrl, signDownload } from "../../src/domain/signedUrl"
import { ForwardingLane } from "../../src/http/forwardingLane"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { Readiness } from "../../src/platform/Readiness"
import { ExportStorage } from "../../src/services/exports/ExportStorage"
import { SigningSecret } from "../../src/services/exports/SigningSecret"
import { ApiKeys } from "../../src/services/identity/ApiKeys"
import { Passwords } from "../../src/services/identity/Passwords"
import { Sessions } from "../../src/services/identity/Sessions"
import { SignInThrottle } from "../../src/services/identity/SignInThrottle"
import { Members } from "../../src/services/people/Members"
import { ProviderKeys } from "../../src/services/providerKeys/ProviderKeys"
import { UsageJournal } from "../../src/services/usage/2-UsageJournal"
import { MemoryUsage, UsageLedger } from "../../src/services/usage/3-UsageLedger/index"
import { UsageOverview } from "../../src/services/usage/4-UsageOverview"
import { AuditLog } from "../../src/services/workspaces/AuditLog"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { WebhookStore } from "../../src/services/webhooks/WebhookStore/index"
import { BudgetStore } from "../../src/services/limits/BudgetStore"
import { freshDatabaseUrl } from "./database"
import { removeTempDir, tempDir } from "./tempDirs"

/**
 * The one way a test starts the whole service in its own process (HTTP server, HttpApi app, forwarding lane,
 * auth, rate limits, exports, console, the built-in simulator as every upstream not configured otherwise):
 * over in-memory stores by default (no PostgreSQL, well under a second), over a fresh migrated PostgreSQL
 * database with `{ stores: "postgres" }`. The built service as a process is `serviceProcess.ts`.
 */

export const testAdminToken = "test-admin-token-0123456789"

/** The server secret of the in-memory app: links in its exports are signed with it. */
export const memorySigningSecret = "memory-app-signing-secret-0123456789abcdef"

/**
 * Export files kept in memory, linked as the local backing links them: signed URLs of this service's
 * `GET /downloads/…`, so a test follows the link of an export as a client would.
 */
const linkedMemoryExportStorage = Layer.effect(
  ExportStorage,
  Effect.gen(function*() {
    const files = yield* ExportStorage
    const { basePath, exportLinkTtlSeconds, publicUrl } = yield* AppConfig
    const linkKey = Redacted.value((yield* SigningSecret).linkKey)
    return ExportStorage.of({
      ...files,
      downloadUrl: (filePath, expiresAt) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const expires = expiresAt === undefined ? Math.floor(now / 1000) + exportLinkTtlSeconds : Math.floor(expiresAt.getTime() / 1000)
          return Effect.as(files.downloadUrl(filePath), downloadUrl(`${publicUrl}${basePath}`, signDownload(linkKey, filePath, expires)))
        })
    })
  })
).pipe(Layer.provide(ExportStorage.memory))

/**
 * Every store of the service kept in this process's memory: what `StoresLive` gives over PostgreSQL,
 * swapped at the one point the composition has for it (`appWith`'s stores).
 */
export const MemoryStores = Layer.mergeAll(
  Members.memory,
  Passwords.memory,
  Sessions.memory,
  SignInThrottle.memory,
  AuditLog.memory,
  // The console's usage charts read the ledger's memory.
  UsageOverview.memory.pipe(Layer.provideMerge(UsageLedger.memory)),
  Readiness.memory,
  ProviderKeys.memory,
  WebhookStore.memory,
  linkedMemoryExportStorage,
  UsageJournal.none,
  BudgetStore.memory
).pipe(
  Layer.provideMerge(ApiKeys.memory),
  Layer.provideMerge(Workspaces.memory),
  Layer.provideMerge(SigningSecret.fixed(memorySigningSecret))
)

export type Stores = "memory" | "postgres"

interface AppCommon {
  /** http://127.0.0.1:PORT followed by BASE_PATH. */
  readonly url: string
  /** http://127.0.0.1:PORT, without BASE_PATH. */
  readonly origin: string
  readonly env: Readonly<Record<string, string>>
  readonly stop: () => Promise<void>
}

export interface MemoryApp extends AppCommon {
  readonly stores: "memory"
  /** Read what the app recorded (usage rows, ingested events) without a database. */
  readonly usage: typeof MemoryUsage.Service
}

export interface PostgresApp extends AppCommon {
  readonly stores: "postgres"
  /** The app's own database (DATABASE_URL), for assertions on what it stored. */
  readonly databaseUrl: string
}

export type RunningApp = MemoryApp | PostgresApp

export interface AppOptions<S extends Stores, Replaced> {
  /** "memory" (the default): every store in memory; "postgres": a fresh migrated database of the test server. */
  readonly stores?: S
  /** Replaces services of the stores (e.g. a `makeTestLayer` stub of one store). */
  readonly overrides?: Layer.Layer<Replaced>
  /** false: every request answered by the HttpApi app, as `AppWithoutLaneLive`. */
  readonly forwardingLane?: boolean
  /** The minimum log level (default: none); Info lets the access lines through to stdout. */
  readonly logLevel?: LogLevel.LogLevel
}

type AppOf<S extends Stores> = S extends "postgres" ? PostgresApp : MemoryApp

/** Starts the whole service with the given environment (see the top of this file). */
export const startApp = async <S extends Stores = "memory", Replaced = never>(
  env: Record<string, string> = {},
  options: AppOptions<S, Replaced> = {}
): Promise<AppOf<S>> => {
  const postgres = options.stores === "postgres"
  const port = await Effect.runPromise(freePort)
  // Removed when the app stops (else with the test file's other folders): a file may start many apps.
  const ownDataDir = env.DATA_DIR === undefined ? tempDir("workspace-api-test-data-") : undefined
  const fullEnv: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: String(port),
    ...(ownDataDir === undefined ? {} : { DATA_DIR: ownDataDir }),
    ...(postgres ? { DATABASE_URL: env.DATABASE_URL ?? (await freshDatabaseUrl()) } : {}),
    ADMIN_TOKEN: testAdminToken,
    ...env
  }
  const scope = Effect.runSync(Scope.make())
  const lane = options.forwardingLane === false ? ForwardingLane.none : ForwardingLane.layer
  const configProvider = Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(fullEnv))))
  const logLevel = Logger.minimumLogLevel(options.logLevel ?? LogLevel.None)
  // The later layer of a merge wins: an override replaces the store of the same tag.
  const overrides = options.overrides ?? Layer.empty
  const origin = `http://127.0.0.1:${port}`
  const common: AppCommon = {
    url: `${origin}${fullEnv.BASE_PATH ?? ""}`,
    origin,
    env: fullEnv,
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      if (ownDataDir !== undefined) removeTempDir(ownDataDir)
    }
  }
  let app: RunningApp
  if (postgres) {
    const layer = appWith(lane, Layer.merge(StoresLive, overrides)).pipe(
      Layer.provide(AppConfig.layer),
      Layer.provide(configProvider),
      Layer.provide(logLevel)
    )
    await Effect.runPromise(Layer.buildWithScope(layer, scope))
    app = { ...common, stores: "postgres", databaseUrl: fullEnv.DATABASE_URL! }
  } else {
    const layer = appWith(lane, Layer.merge(MemoryStores, overrides)).pipe(
      Layer.provide(AppConfig.layer),
      Layer.provide(configProvider),
      Layer.provide(logLevel)
    )
    const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    app = { ...common, stores: "memory", usage: Effect.runSync(Effect.provide(MemoryUsage, context)) }
  }
  return app as AppOf<S>
}

/** One app for the enclosing describe block (started before its tests, stopped after them). */
export const useApp = <S extends Stores = "memory", Replaced = never>(
  env: Record<string, string> = {},
  options: AppOptions<S, Replaced> = {}
): { readonly current: AppOf<S> } => {
  const holder: { current: AppOf<S> } = { current: undefined as unknown as AppOf<S> }
  beforeAll(async () => {
    holder.current = await startApp(env, options)
  })
  afterAll(async () => {
    await holder.current?.stop()
  })
  return holder
}

/** JSON request helper for tests. */
export const call = async (
  app: Pick<AppCommon, "url">,
  method: string,
  route: string,
  options: { readonly token?: string; readonly body?: unknown; readonly headers?: Record<string, string> } = {}
): Promise<{ readonly status: number; readonly body: any; readonly headers: Headers }> => {
  const response = await fetch(`${app.url}${route}`, {
    method,
    headers: {
      ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers
    },
    ...(options.body !== undefined ? { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) } : {})
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // Not JSON: the text is the body.
  }
  return { status: response.status, body, headers: response.headers }
}

/** Admin helpers: a workspace and a key with the given scopes. */
export const createWorkspace = async (app: Pick<AppCommon, "url">, name = "Acme", settings?: unknown) => {
  const created = await call(app, "POST", "/admin/workspaces", { token: testAdminToken, body: { name, ...(settings ? { settings } : {}) } })
  if (created.status !== 201) throw new Error(`workspace not created: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body as { id: string; name: string; settings: Record<string, unknown> }
}

export const createKey = async (app: Pick<AppCommon, "url">, workspaceId: string, scopes: ReadonlyArray<string>, name = "test key") => {
  const created = await call(app, "POST", `/admin/workspaces/${workspaceId}/api-keys`, { token: testAdminToken, body: { name, scopes } })
  if (created.status !== 201) throw new Error(`key not created: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body as { id: string; key: string; scopes: Array<string> }
}
