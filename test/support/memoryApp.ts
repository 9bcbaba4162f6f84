import { Clock, ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { appWith } from "../../src/appLayer"
import { AppConfig } from "../../src/config"
import { downloadUrl, signDownload } from "../../src/domain/signedUrl"
import { ForwardingLane } from "../../src/http/forwardingLane"
import { ApiKeys } from "../../src/services/identity/ApiKeys"
import { AuditLog } from "../../src/services/workspaces/AuditLog"
import { freePort } from "../../src/platform/EmbeddedPostgres"
import { ExportStorage } from "../../src/services/exports/ExportStorage"
import { Members } from "../../src/services/people/Members"
import { Passwords } from "../../src/services/identity/Passwords"
import { Readiness } from "../../src/platform/Readiness"
import { Sessions } from "../../src/services/identity/Sessions"
import { SigningSecret } from "../../src/services/exports/SigningSecret"
import { SignInThrottle } from "../../src/services/identity/SignInThrottle"
import { MemoryUsage, UsageLedger } from "../../src/services/usage/3-UsageLedger/index"
import { UsageJournal } from "../../src/services/usage/2-UsageJournal"
import { UsageOverview } from "../../src/services/usage/4-UsageOverview"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { afterAll, beforeAll } from "vitest"
import { testAdminToken } from "./testApp"
import { ProviderKeys } from "../../src/services/providerKeys/ProviderKeys"
import { removeTempDir, tempDir } from "./tempDirs"

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
  linkedMemoryExportStorage,
  UsageJournal.none
).pipe(
  Layer.provideMerge(ApiKeys.memory),
  Layer.provideMerge(Workspaces.memory),
  Layer.provideMerge(SigningSecret.fixed(memorySigningSecret))
)

export interface MemoryApp {
  /** http://127.0.0.1:PORT followed by BASE_PATH. */
  readonly url: string
  readonly origin: string
  readonly env: Readonly<Record<string, string>>
  /** Read what the app recorded (usage rows, ingested events) without a database. */
  readonly usage: typeof MemoryUsage.Service
  readonly stop: () => Promise<void>
}

/**
 * The whole service — HTTP server, the HttpApi app, the forwarding lane, auth, rate limits (in memory),
 * exports, the console — over the in-memory stores, with the built-in simulator as every upstream. No
 * PostgreSQL, no globalSetup: it starts in well under a second.
 */
export const startMemoryApp = async <Replaced = never>(
  env: Record<string, string> = {},
  options: {
    /** Replaces services of MemoryStores (e.g. a `makeTestLayer` stub of one store). */
    readonly overrides?: Layer.Layer<Replaced>
    /** false: every request answered by the HttpApi app, as `AppWithoutLaneLive`. */
    readonly forwardingLane?: boolean
    /** The minimum log level (default: none); Info lets the access lines through to stdout. */
    readonly logLevel?: LogLevel.LogLevel
  } = {}
): Promise<MemoryApp> => {
  const port = await Effect.runPromise(freePort)
  // Nothing is written there (no journal, exports in memory); the configuration wants a folder.
  const ownDataDir = env.DATA_DIR === undefined ? tempDir("workspace-api-memory-") : undefined
  const fullEnv: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: String(port),
    ...(ownDataDir === undefined ? {} : { DATA_DIR: ownDataDir }),
    ADMIN_TOKEN: testAdminToken,
    ...env
  }
  const scope = Effect.runSync(Scope.make())
  // The later layer of a merge wins: an override replaces the memory store of the same tag.
  const stores = Layer.merge(MemoryStores, options.overrides ?? Layer.empty)
  const layer = appWith(options.forwardingLane === false ? ForwardingLane.none : ForwardingLane.layer, stores).pipe(
    Layer.provide(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(fullEnv))))),
    Layer.provide(Logger.minimumLogLevel(options.logLevel ?? LogLevel.None))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const origin = `http://127.0.0.1:${port}`
  return {
    url: `${origin}${fullEnv.BASE_PATH ?? ""}`,
    origin,
    env: fullEnv,
    usage: Effect.runSync(Effect.provide(MemoryUsage, context)),
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      if (ownDataDir !== undefined) removeTempDir(ownDataDir)
    }
  }
}

/** One in-memory app for the enclosing describe block. */
export const useMemoryApp = (env: Record<string, string> = {}): { readonly current: MemoryApp } => {
  const holder: { current: MemoryApp } = { current: undefined as unknown as MemoryApp }
  beforeAll(async () => {
    holder.current = await startMemoryApp(env)
  })
  afterAll(async () => {
    await holder.current?.stop()
  })
  return holder
}
