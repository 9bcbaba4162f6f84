import { Config, ConfigError, Context, Effect, Either, Layer, LogLevel, Option, ParseResult, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseTrustedProxies, type TrustedProxies } from "./domain/clientAddress"
import { type CredentialsKey, parseCredentialsKey } from "./domain/credentials"
import type { RoutesSetting } from "./domain/deployments"
import { PriceTable } from "./domain/prices"
import type { TraceSampler } from "./domain/traceContext"
import { wirePath } from "./domain/validationIssue"
import { projectRoot } from "./projectRoot"
import type { ShorthandUpstream } from "./domain/routesFile"
import { providers } from "./providers/provider"
import { upstreamRoutes } from "./upstreamsFile"

/** One upstream per provider and region it serves, named `<provider>_<region>` (UPSTREAM_<ID>_URL). */
export type UpstreamId = (typeof providers)[number] extends infer P
  ? P extends { readonly id: infer Id extends string; readonly regions: ReadonlyArray<infer Region extends string> } ? `${Id}_${Region}`
  : never
  : never

/** The upstreams the service forwards to, read from the providers' records. */
export const upstreamIds = providers.flatMap((provider) =>
  provider.regions.map((region) => `${provider.id}_${region}`)
) as ReadonlyArray<UpstreamId>

export interface UpstreamSetting {
  readonly url: string
  readonly key: Redacted.Redacted
}

export interface S3Credentials {
  readonly accessKeyId: string
  readonly secretAccessKey: Redacted.Redacted
  readonly sessionToken: Option.Option<Redacted.Redacted>
}

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  /** "" or a path such as "/api/public"; every route lives under it. */
  readonly basePath: "" | `/${string}`
  /** Base of absolute links (download URLs); defaults to http://HOST:PORT. */
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** EMBEDDED_POSTGRES_PORT: the embedded PostgreSQL's port; None: the one kept in DATA_DIR (or a free one). */
  readonly embeddedPostgresPort: Option.Option<number>
  /** USAGE_JOURNAL_REQUIRED: billable requests are refused (503) while their usage record cannot be journaled. */
  readonly usageJournalRequired: boolean
  /** WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: webhooks may point at loopback and private addresses, and use plain http. */
  readonly webhooksAllowPrivateAddresses: boolean
  readonly adminToken: Option.Option<Redacted.Redacted>
  readonly logLevel: LogLevel.LogLevel
  /** json: one JSON object a line (for collectors); pretty: one readable line an entry (for terminals). */
  readonly logFormat: "json" | "pretty"
  readonly databaseTimeouts: {
    /** Longest wait for a pooled connection (a new one included) before the request fails with 503. */
    readonly acquireMs: number
    /** Longest a statement may run on the server before it is cancelled and the request fails with 503. */
    readonly statementMs: number
  }
  readonly maxBodyBytes: number
  readonly exportStorage: "local" | "s3"
  readonly s3: {
    readonly bucket: Option.Option<string>
    readonly endpoint: Option.Option<string>
    readonly region: string
    readonly forcePathStyle: boolean
    /** AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN); None: the SDK's default chain. */
    readonly credentials: Option.Option<S3Credentials>
  }
  /** Lifetime of export download links (local signed links and S3 presigned URLs). */
  readonly exportLinkTtlSeconds: number
  /** An export with more rows than this is refused with 400 before anything is written. */
  readonly exportMaxRows: number
  /** Exports running at once: per instance (fixed, see ExportService) and per workspace, and how long one may wait for a slot. */
  readonly exportSlots: {
    /** EXPORT_CONCURRENCY_PER_WORKSPACE: exports of one workspace running at once; more wait their turn. */
    readonly perWorkspace: number
    /** EXPORT_QUEUE_TIMEOUT_MS: longest wait for a slot before the export is answered 429 or 503 with `retry-after`. */
    readonly maxWaitMs: number
  }
  /** Secret of download-link signatures and user pseudonyms; None: generated once, kept in the database. */
  readonly exportSigningSecret: Option.Option<Redacted.Redacted>
  readonly upstreams: Readonly<Record<UpstreamId, Option.Option<UpstreamSetting>>>
  /** UPSTREAMS_FILE's routes, and the UPSTREAM_PROVIDER_* shorthand's for the routes it does not name. */
  readonly routes: RoutesSetting
  /** UPSTREAM_MAX_ATTEMPTS: deployments of its route a request is tried on at most. */
  readonly upstreamMaxAttempts: number
  readonly rateLimit: {
    /** memory: this instance only; redis: shared by every instance. */
    readonly store: "memory" | "redis"
    readonly redisUrl: string
    /** What to do when Redis cannot be asked: admit (open) or refuse with 503 (closed). */
    readonly onStoreFailure: "open" | "closed"
    readonly redisTimeoutMs: number
  }
  /** The messages protocol version sent upstream, whatever version header the client sent. */
  readonly upstreamMessagesVersion: string
  /** JSON file of model prices (US dollars per million tokens). */
  readonly priceTableFile: string
  /** The content of priceTableFile, read and checked with the rest of the settings. */
  readonly priceTable: PriceTable
  readonly upstreamTimeouts: {
    readonly connectMs: number
    readonly firstByteMs: number
    readonly idleMs: number
  }
  /** Bounds on what an upstream may send: its answers are untrusted input. */
  readonly upstreamLimits: {
    /** Longest SSE event (or unfinished line) read from an upstream stream. */
    readonly maxSseEventBytes: number
    /** Largest JSON answer (or error body) read from an upstream. */
    readonly maxJsonAnswerBytes: number
    /** JSON answer bytes held at once across all requests; beyond it an answer is refused with 503. */
    readonly jsonAnswerBudgetBytes: number
    /** Longest whole upstream exchange, headers to last byte, however steadily it trickles. */
    readonly exchangeDeadlineMs: number
  }
  /** Connection limits and timeouts of the HTTP server. */
  readonly serverLimits: {
    readonly headersTimeoutMs: number
    readonly requestTimeoutMs: number
    readonly keepAliveTimeoutMs: number
    readonly maxConnections: number
    /** Open connections from one client address at most (0: no limit). */
    readonly maxConnectionsPerAddress: number
    /** A connection that has sent no byte within this is closed. */
    readonly firstByteTimeoutMs: number
    /** SHUTDOWN_GRACE_MS: how long shutdown waits for in-flight requests (long streams included) before closing them. */
    readonly shutdownGraceMs: number
  }
  /**
   * CREDENTIALS_KEY seals customer-supplied provider keys; CREDENTIALS_KEY_PREVIOUS, during a rotation, opens
   * those sealed before it. Without CREDENTIALS_KEY no provider key can be saved.
   */
  readonly credentialsKeys: {
    readonly current: Option.Option<CredentialsKey>
    readonly previous: Option.Option<CredentialsKey>
  }
  /**
   * Failed credentials (API keys and admin tokens, counted apart) allowed within the window per client
   * address, per network (/24, /64) and in all, before a credential not known to be valid is 429.
   */
  readonly authFailures: {
    readonly limit: number
    readonly networkLimit: number
    readonly globalLimit: number
    readonly windowSeconds: number
  }
  /** TRUSTED_PROXIES: the proxies whose X-Forwarded-For names the client address; None: the connection's peer. */
  readonly trustedProxies: Option.Option<TrustedProxies>
  /** Prometheus metrics at GET /metrics (docs/operations.md, "Metrics"). */
  readonly metrics: {
    /** METRICS=off: nothing is counted and /metrics answers 404 (what the cost benchmark compares against). */
    readonly enabled: boolean
    /** METRICS_TOKEN: the bearer /metrics asks for; None: open to whoever reaches the port. */
    readonly token: Option.Option<Redacted.Redacted>
    /** METRICS_WORKSPACE_LABELS=true: usage and refusals labelled by workspace (one series per workspace). */
    readonly workspaceLabels: boolean
  }
  /** OpenTelemetry traces over OTLP/HTTP (docs/operations.md, "Traces"); None: no tracer at all. */
  readonly tracing: Option.Option<TracingSettings>
}

/** Where and how much to trace, from the standard OTEL_* variables. */
export interface TracingSettings {
  /** Where spans are posted: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  readonly sampler: TraceSampler
  /** OTEL_BSP_SCHEDULE_DELAY: how often finished spans are posted. */
  readonly exportIntervalMs: number
}


/**
 * Exports running at once per instance. On the PostgreSQL ledger each holds two pooled connections (of 20) while
 * it reads: the bound keeps the pool from being taken by exports waiting for their second.
 */
export const EXPORTS_PER_INSTANCE = 4

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "Expected a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

const basePath = Config.string("BASE_PATH").pipe(
  Config.validate({
    message: "Expected empty or a path starting with / made of letters, digits, - _ . and /, such as /api/public",
    validation: (p) => /^((\/[A-Za-z0-9._-]+)+\/?)?$/.test(p)
  }),
  Config.withDefault(""),
  Config.map((raw): "" | `/${string}` => {
    const trimmed = raw.replace(/\/+$/, "")
    return trimmed.startsWith("/") ? (trimmed as `/${string}`) : ""
  })
)

const isHttpUrl = (raw: string): boolean => Either.isRight(Either.try(() => new URL(raw))) && /^https?:\/\//.test(raw)

const httpUrl = (name: string) =>
  Config.string(name).pipe(
    Config.validate({ message: "Expected an absolute http(s) URL such as https://host:port", validation: isHttpUrl }),
    Config.map((raw) => raw.replace(/\/+$/, ""))
  )

/** Download links are PUBLIC_URL + path + `?expires=…`: a query or fragment of its own would break them. */
const publicUrl = Config.string("PUBLIC_URL").pipe(
  Config.validate({
    message: "Expected an absolute http(s) URL without ?query or #fragment, such as https://api.example.com",
    validation: (raw) => isHttpUrl(raw) && !/[?#]/.test(raw)
  }),
  Config.map((raw) => raw.replace(/\/+$/, ""))
)

/**
 * Loopback by default: a fresh `npm start` is not reachable from the network (containers set HOST=0.0.0.0).
 * An empty HOST would be taken as "any address" by the listener yet give links to http://:PORT.
 */
const host = Config.string("HOST").pipe(
  Config.validate({
    message: "Expected a host name or IP address to listen on, such as 0.0.0.0, 127.0.0.1 or ::",
    validation: (h) => /^[A-Za-z0-9._%:-]+$/.test(h)
  }),
  Config.withDefault("127.0.0.1")
)

const upstream = (id: UpstreamId) => {
  const prefix = `UPSTREAM_${id.toUpperCase()}`
  return Config.all({
    url: Config.option(httpUrl(`${prefix}_URL`)),
    key: Config.option(Config.redacted(`${prefix}_KEY`))
  }).pipe(
    Config.validate({
      message: `${prefix}_KEY is set but ${prefix}_URL is not: set both, or neither to use the built-in simulator`,
      validation: ({ key, url }) => Option.isSome(url) || Option.isNone(key)
    }),
    Config.map(({ key, url }) =>
      Option.map(url, (u): UpstreamSetting => ({ url: u, key: Option.getOrElse(key, () => Redacted.make("")) }))
    )
  )
}

const s3Credentials = Config.all({
  accessKeyId: Config.option(Config.string("AWS_ACCESS_KEY_ID")),
  secretAccessKey: Config.option(Config.redacted("AWS_SECRET_ACCESS_KEY")),
  sessionToken: Config.option(Config.redacted("AWS_SESSION_TOKEN"))
}).pipe(
  Config.validate({
    message: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither for the SDK's default chain",
    validation: (c) => Option.isSome(c.accessKeyId) === Option.isSome(c.secretAccessKey)
  }),
  Config.map((c) =>
    Option.flatMap(c.accessKeyId, (accessKeyId) =>
      Option.map(c.secretAccessKey, (secretAccessKey): S3Credentials => ({
        accessKeyId,
        secretAccessKey,
        sessionToken: c.sessionToken
      }))
    )
  )
)

const logLevel = Config.literal("trace", "debug", "info", "warning", "error", "none")("LOG_LEVEL").pipe(
  Config.withDefault("info" as const),
  Config.map((level) =>
    ({
      trace: LogLevel.Trace,
      debug: LogLevel.Debug,
      info: LogLevel.Info,
      warning: LogLevel.Warning,
      error: LogLevel.Error,
      none: LogLevel.None
    })[level]
  )
)

/** OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated by commas, values URL-encoded (the OTel spec's form). */
const otlpHeaders = Config.string("OTEL_EXPORTER_OTLP_HEADERS").pipe(
  Config.withDefault(""),
  Config.mapOrFail((raw) => {
    const headers: Record<string, string> = {}
    for (const pair of raw.split(",").map((part) => part.trim()).filter((part) => part !== "")) {
      const at = pair.indexOf("=")
      const name = at <= 0 ? "" : pair.slice(0, at).trim().toLowerCase()
      const value = Either.try(() => decodeURIComponent(pair.slice(at + 1).trim()))
      if (name === "" || Either.isLeft(value)) {
        return Either.left(ConfigError.InvalidData(["OTEL_EXPORTER_OTLP_HEADERS"], "Expected key=value pairs separated by commas"))
      }
      headers[name] = value.right
    }
    return Either.right(headers)
  })
)

const traceSamplerKinds = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
] as const

/** The OTel default is parentbased_always_on; a ratio sampler without OTEL_TRACES_SAMPLER_ARG samples everything. */
const traceSampler: Config.Config<TraceSampler> = Config.all({
  kind: Config.literal(...traceSamplerKinds)("OTEL_TRACES_SAMPLER").pipe(Config.withDefault("parentbased_always_on" as const)),
  ratio: Config.number("OTEL_TRACES_SAMPLER_ARG").pipe(
    Config.validate({ message: "Expected a ratio between 0 and 1", validation: (r) => r >= 0 && r <= 1 }),
    Config.withDefault(1)
  )
}).pipe(Config.map(({ kind, ratio }): TraceSampler =>
  kind === "traceidratio" || kind === "parentbased_traceidratio" ? { kind, ratio } : { kind }
))

/** Tracing is on when an OTLP endpoint is given (for traces, or for every signal). */
const tracing: Config.Config<Option.Option<TracingSettings>> = Config.all({
  endpoint: Config.option(httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT")),
  tracesEndpoint: Config.option(httpUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  headers: otlpHeaders,
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("workspace-api")),
  sampler: traceSampler,
  exportIntervalMs: positiveInt("OTEL_BSP_SCHEDULE_DELAY", 5_000)
}).pipe(Config.map(({ endpoint, tracesEndpoint, ...settings }) =>
  Option.orElse(tracesEndpoint, () => Option.map(endpoint, (root) => `${root}/v1/traces`)).pipe(
    Option.map((url): TracingSettings => ({ url, ...settings }))
  )
))

const decodePriceTable = Schema.decodeUnknownEither(Schema.parseJson(PriceTable))
const priceTableExpected = "expected a readable JSON file { \"models\": { \"<model>\": { \"input\": <USD>, \"output\": <USD> } } }"

/** The first decode issue on one line (a ParseError's own message spans several). */
const firstIssue = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return error.message
  const at = wirePath(issue.path)
  return at === null ? issue.message : `${at}: ${issue.message}`
}

/** A customer-key encryption key (32 bytes, base64 or hex), refused at start-up with one line when malformed. */
const credentialsKey = (name: string) =>
  Config.redacted(name).pipe(
    Config.mapOrFail((text) => Either.mapLeft(parseCredentialsKey(Redacted.value(text)), (problem) => ConfigError.InvalidData([name], problem)))
  )

/**
 * PRICE_TABLE_FILE is read and decoded here, with the other settings, so that a missing or bad file
 * stops start-up with the same one line as any other bad setting (the read is synchronous and once).
 */
const priceTable = Config.string("PRICE_TABLE_FILE").pipe(
  Config.withDefault(path.join(projectRoot, "config/prices.json")),
  Config.map((file) => path.resolve(file)),
  Config.mapOrFail((file) => {
    const invalid = (problem: string) => ConfigError.InvalidData(["PRICE_TABLE_FILE"], `${file}: ${problem}; ${priceTableExpected}`)
    return Either.try({
      try: () => fs.readFileSync(file, "utf8"),
      catch: (cause) => invalid(`cannot be read (${cause instanceof Error && "code" in cause ? String(cause.code) : "error"})`)
    }).pipe(
      Either.flatMap((text) => Either.mapLeft(decodePriceTable(text), (error) => invalid(`not a valid price table (${firstIssue(error)})`))),
      Either.map((table) => ({ file, table }))
    )
  })
)

/**
 * The host part of the default PUBLIC_URL, http://HOST:PORT: a wildcard address (0.0.0.0, ::) is no address a
 * client can use, so its links point at loopback (behind a proxy or in a container, set PUBLIC_URL); IPv6 goes
 * in brackets.
 */
const linkHost = (listen: string): string =>
  listen === "0.0.0.0" || listen === "::" ? "127.0.0.1" : listen.includes(":") ? `[${listen}]` : listen

/** The settings read by Config alone: all but the routes, whose file names further variables (its secrets). */
const settings: Config.Config<Omit<AppConfigShape, "routes">> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host,
  basePath,
  publicUrl: Config.option(publicUrl),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data"), Config.map((dir) => path.resolve(dir))),
  databaseUrl: Config.option(
    Config.string("DATABASE_URL").pipe(
      Config.validate({
        message: "Expected a postgres:// or postgresql:// connection URL",
        validation: (url) => /^postgres(ql)?:\/\//.test(url)
      }),
      Config.map(Redacted.make)
    )
  ),
  embeddedPostgresPort: Config.option(Config.port("EMBEDDED_POSTGRES_PORT")),
  usageJournalRequired: Config.boolean("USAGE_JOURNAL_REQUIRED").pipe(Config.withDefault(false)),
  webhooksAllowPrivateAddresses: Config.boolean("WEBHOOKS_ALLOW_PRIVATE_ADDRESSES").pipe(Config.withDefault(false)),
  adminToken: Config.option(
    Config.string("ADMIN_TOKEN").pipe(
      Config.validate({ message: "Expected at least 16 characters", validation: (token) => token.length >= 16 }),
      Config.map(Redacted.make)
    )
  ),
  logLevel,
  logFormat: Config.literal("json", "pretty")("LOG_FORMAT").pipe(Config.withDefault("json" as const)),
  databaseTimeouts: Config.all({
    acquireMs: positiveInt("DATABASE_ACQUIRE_TIMEOUT_MS", 5_000),
    statementMs: positiveInt("DATABASE_STATEMENT_TIMEOUT_MS", 30_000)
  }),
  maxBodyBytes: positiveInt("MAX_BODY_BYTES", 10 * 1024 * 1024),
  exportStorage: Config.literal("local", "s3")("EXPORT_STORAGE").pipe(Config.withDefault("local" as const)),
  s3: Config.all({
    bucket: Config.option(Config.string("S3_BUCKET")),
    endpoint: Config.option(httpUrl("S3_ENDPOINT")),
    region: Config.string("S3_REGION").pipe(Config.withDefault("us-east-1")),
    forcePathStyle: Config.boolean("S3_FORCE_PATH_STYLE").pipe(Config.withDefault(false)),
    credentials: s3Credentials
  }),
  // S3 presigned URLs live at most 7 days.
  exportLinkTtlSeconds: positiveInt("EXPORT_LINK_TTL_SECONDS", 3600).pipe(
    Config.validate({ message: "Expected at most 604800 (7 days)", validation: (n) => n <= 604_800 })
  ),
  exportMaxRows: positiveInt("EXPORT_MAX_ROWS", 1_000_000),
  exportSlots: Config.all({
    perWorkspace: Config.integer("EXPORT_CONCURRENCY_PER_WORKSPACE").pipe(
      Config.validate({
        message: `Expected a positive integer, at most ${EXPORTS_PER_INSTANCE} (the exports an instance runs at once)`,
        validation: (n) => n > 0 && n <= EXPORTS_PER_INSTANCE
      }),
      Config.withDefault(2)
    ),
    maxWaitMs: positiveInt("EXPORT_QUEUE_TIMEOUT_MS", 60_000)
  }),
  exportSigningSecret: Config.option(
    Config.string("EXPORT_SIGNING_SECRET").pipe(
      Config.validate({ message: "Expected at least 32 characters", validation: (secret) => secret.length >= 32 }),
      Config.map(Redacted.make)
    )
  ),
  // Built from the list, so the record has every id: the type says so.
  upstreams: Config.all(
    Object.fromEntries(upstreamIds.map((id) => [id, upstream(id)])) as Record<UpstreamId, ReturnType<typeof upstream>>
  ),
  upstreamMaxAttempts: Config.integer("UPSTREAM_MAX_ATTEMPTS").pipe(
    Config.validate({ message: "Expected an integer from 1 to 10", validation: (n) => n >= 1 && n <= 10 }),
    Config.withDefault(3)
  ),
  rateLimit: Config.all({
    store: Config.literal("memory", "redis")("RATE_LIMIT_STORE").pipe(Config.withDefault("memory" as const)),
    redisUrl: Config.string("REDIS_URL").pipe(
      Config.validate({ message: "Expected a redis:// or rediss:// URL", validation: (url) => /^rediss?:\/\//.test(url) }),
      Config.withDefault("redis://127.0.0.1:6379")
    ),
    onStoreFailure: Config.literal("open", "closed")("RATE_LIMIT_ON_STORE_FAILURE").pipe(Config.withDefault("open" as const)),
    redisTimeoutMs: positiveInt("RATE_LIMIT_REDIS_TIMEOUT_MS", 250)
  }),
  upstreamMessagesVersion: Config.string("UPSTREAM_MESSAGES_VERSION").pipe(
    Config.validate({ message: "Expected a date such as 2023-06-01", validation: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) }),
    Config.withDefault("2023-06-01")
  ),
  priceTable,
  upstreamTimeouts: Config.all({
    connectMs: positiveInt("UPSTREAM_CONNECT_TIMEOUT_MS", 10_000),
    firstByteMs: positiveInt("UPSTREAM_FIRST_BYTE_TIMEOUT_MS", 120_000),
    idleMs: positiveInt("UPSTREAM_IDLE_TIMEOUT_MS", 60_000)
  }),
  upstreamLimits: Config.all({
    maxSseEventBytes: positiveInt("UPSTREAM_MAX_SSE_EVENT_BYTES", 1024 * 1024),
    maxJsonAnswerBytes: positiveInt("UPSTREAM_MAX_JSON_BYTES", 16 * 1024 * 1024),
    jsonAnswerBudgetBytes: positiveInt("UPSTREAM_JSON_BUDGET_BYTES", 64 * 1024 * 1024),
    exchangeDeadlineMs: positiveInt("UPSTREAM_DEADLINE_MS", 600_000)
  }),
  serverLimits: Config.all({
    headersTimeoutMs: positiveInt("SERVER_HEADERS_TIMEOUT_MS", 10_000),
    requestTimeoutMs: positiveInt("SERVER_REQUEST_TIMEOUT_MS", 60_000),
    keepAliveTimeoutMs: positiveInt("SERVER_KEEP_ALIVE_TIMEOUT_MS", 5_000),
    shutdownGraceMs: positiveInt("SHUTDOWN_GRACE_MS", 20_000),
    maxConnections: positiveInt("SERVER_MAX_CONNECTIONS", 4_096),
    maxConnectionsPerAddress: Config.integer("SERVER_MAX_CONNECTIONS_PER_ADDRESS").pipe(
      Config.validate({ message: "Expected 0 (no limit) or a positive integer", validation: (n) => n >= 0 }),
      Config.withDefault(256)
    ),
    firstByteTimeoutMs: positiveInt("SERVER_FIRST_BYTE_TIMEOUT_MS", 5_000)
  }).pipe(
    // Node refuses a headers timeout longer than the request's.
    Config.validate({
      message: "SERVER_HEADERS_TIMEOUT_MS must be at most SERVER_REQUEST_TIMEOUT_MS",
      validation: (limits) => limits.headersTimeoutMs <= limits.requestTimeoutMs
    })
  ),
  authFailures: Config.all({
    limit: positiveInt("AUTH_FAILURE_LIMIT", 20),
    networkLimit: positiveInt("AUTH_FAILURE_NETWORK_LIMIT", 100),
    globalLimit: positiveInt("AUTH_FAILURE_GLOBAL_LIMIT", 1_000),
    windowSeconds: positiveInt("AUTH_FAILURE_WINDOW_SECONDS", 60)
  }),
  trustedProxies: Config.string("TRUSTED_PROXIES").pipe(
    Config.withDefault(""),
    Config.mapOrFail((text) =>
      Either.match(parseTrustedProxies(text), {
        onLeft: (problem) => Either.left(ConfigError.InvalidData(["TRUSTED_PROXIES"], problem)),
        onRight: (trusted) => Either.right(Option.fromNullable(trusted))
      })
    )
  ),
  metrics: Config.all({
    enabled: Config.literal("on", "off")("METRICS").pipe(Config.withDefault("on" as const), Config.map((value) => value === "on")),
    token: Config.option(
      Config.string("METRICS_TOKEN").pipe(
        Config.validate({ message: "Expected at least 16 characters", validation: (token) => token.length >= 16 }),
        Config.map(Redacted.make)
      )
    ),
    workspaceLabels: Config.boolean("METRICS_WORKSPACE_LABELS").pipe(Config.withDefault(false))
  }),
  tracing,
  credentialsKeys: Config.all({
    current: Config.option(credentialsKey("CREDENTIALS_KEY")),
    previous: Config.option(credentialsKey("CREDENTIALS_KEY_PREVIOUS"))
  }).pipe(
    Config.validate({
      message: "CREDENTIALS_KEY_PREVIOUS is given without CREDENTIALS_KEY (the key to re-encrypt under)",
      validation: (keys) => Option.isSome(keys.current) || Option.isNone(keys.previous)
    })
  )
}).pipe(
  Config.validate({
    message: "EXPORT_STORAGE=s3 needs S3_BUCKET",
    validation: (c) => c.exportStorage === "local" || Option.isSome(c.s3.bucket)
  }),
  Config.map(({ priceTable, ...c }) => ({
    ...c,
    priceTableFile: priceTable.file,
    priceTable: priceTable.table,
    publicUrl: Option.getOrElse(
      c.publicUrl,
      () => `http://${linkHost(c.host)}:${c.port}`
    )
  }))
)

/** The shorthand's routes: each UPSTREAM_<PROVIDER>_<REGION>_URL that is set. */
const shorthandUpstreams = (upstreams: AppConfigShape["upstreams"]): ReadonlyArray<ShorthandUpstream> =>
  providers.flatMap((provider) =>
    provider.regions.flatMap((region) =>
      Option.match(upstreams[`${provider.id}_${region}` as UpstreamId], {
        onNone: () => [],
        onSome: (setting) => [{ provider: provider.id, region, url: setting.url, apiKey: setting.key }]
      })
    )
  )

/** Every setting of the service, read from the environment and validated once at start-up. */
export const appConfig: Effect.Effect<AppConfigShape, ConfigError.ConfigError> = Effect.flatMap(settings, (c) =>
  Effect.map(upstreamRoutes(shorthandUpstreams(c.upstreams)), (routes) => ({ ...c, routes })))

const configProblems = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...configProblems(error.left), ...configProblems(error.right)]
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return [error.path.length > 0 ? `${error.path.join("_")}: ${error.message}` : error.message]
  }
}

/** One line naming the variable and what it expects, for a service that must not start. */
export const describeConfigError = (error: ConfigError.ConfigError): string =>
  `Invalid configuration: ${[...new Set(configProblems(error))].join("; ")}`

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {
  /** Reads the environment; fails with a ConfigError whose text names the variable. */
  static readonly layer = Layer.effect(AppConfig, appConfig)

  static readonly layerWith = (overrides: Partial<AppConfigShape>) =>
    Layer.effect(AppConfig, Effect.map(appConfig, (c) => ({ ...c, ...overrides })))
}
