import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { afterAll, beforeAll } from "vitest"
import { AppLive, AppWithoutLaneLive } from "../../src/appLayer"
import { AppConfig } from "../../src/config"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { freshDatabaseUrl } from "./database"
import { removeTempDir, tempDir } from "./tempDirs"

export const testAdminToken = "test-admin-token-0123456789"

export interface RunningApp {
  /** http://127.0.0.1:PORT followed by BASE_PATH. */
  readonly url: string
  /** http://127.0.0.1:PORT, without BASE_PATH. */
  readonly origin: string
  readonly env: Readonly<Record<string, string>>
  readonly stop: () => Promise<void>
}

/** Starts the whole service (real HTTP server, real PostgreSQL) with the given environment. */
export const startApp = async (
  env: Record<string, string> = {},
  options: { readonly forwardingLane?: boolean } = {}
): Promise<RunningApp> => {
  const port = await Effect.runPromise(freePort)
  // Removed when the app stops (else with the test file's other folders): a file may start many apps.
  const ownDataDir = env.DATA_DIR === undefined ? tempDir("workspace-api-test-data-") : undefined
  const fullEnv: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: String(port),
    ...(ownDataDir === undefined ? {} : { DATA_DIR: ownDataDir }),
    DATABASE_URL: env.DATABASE_URL ?? (await freshDatabaseUrl()),
    ADMIN_TOKEN: testAdminToken,
    ...env
  }
  const scope = Effect.runSync(Scope.make())
  const layer = (options.forwardingLane === false ? AppWithoutLaneLive : AppLive).pipe(
    Layer.provide(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(fullEnv))))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.None))
  )
  await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const origin = `http://127.0.0.1:${port}`
  return {
    url: `${origin}${fullEnv.BASE_PATH ?? ""}`,
    origin,
    env: fullEnv,
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      if (ownDataDir !== undefined) removeTempDir(ownDataDir)
    }
  }
}

/** One service for the enclosing describe block. */
export const useApp = (env: Record<string, string> = {}): { readonly current: RunningApp } => {
  const holder: { current: RunningApp } = { current: undefined as unknown as RunningApp }
  beforeAll(async () => {
    holder.current = await startApp(env)
  })
  afterAll(async () => {
    await holder.current?.stop()
  })
  return holder
}

/** JSON request helper for tests. */
export const call = async (
  app: RunningApp,
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
export const createWorkspace = async (app: RunningApp, name = "Acme", settings?: unknown) => {
  const created = await call(app, "POST", "/admin/workspaces", { token: testAdminToken, body: { name, ...(settings ? { settings } : {}) } })
  if (created.status !== 201) throw new Error(`workspace not created: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body as { id: string; name: string; settings: Record<string, unknown> }
}

export const createKey = async (app: RunningApp, workspaceId: string, scopes: ReadonlyArray<string>, name = "test key") => {
  const created = await call(app, "POST", `/admin/workspaces/${workspaceId}/api-keys`, { token: testAdminToken, body: { name, scopes } })
  if (created.status !== 201) throw new Error(`key not created: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body as { id: string; key: string; scopes: Array<string> }
}
