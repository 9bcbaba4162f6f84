import { Data, Effect, Either, ParseResult, Redacted, Schema } from "effect"
import type * as YAML from "yaml"
import {
  type AwsCredentials,
  type Deployment,
  type NativeDeployment,
  type OperatorCatalog,
  type RouteId,
  routeId,
  type RoutesSetting,
  type ServiceAccount,
  upstreamKinds,
  type UpstreamKindName
} from "./deployments"
import { MODEL_CATALOG, type ModelFamily, type ModelInfo, type TokenizerHint } from "./models"
import { type ProviderId, providerIds, ProviderIdSchema } from "./providerId"

/**
 * The routes file (UPSTREAMS_FILE, DESIGN "Upstreams: routes and deployments"): its schema and every check
 * made at start-up, down to the resolved RoutesSetting. No I/O here: the caller hands in the file as the YAML
 * parser read it and a reader of secrets, so that every refusal is one line naming the route and deployment.
 */

/** Why the file cannot be used: one line, e.g. `routes.provider_b/eu[0] (bedrock-frankfurt): secret env X is not set`. */
export class RoutesFileInvalid extends Data.TaggedError("RoutesFileInvalid")<{ readonly problem: string }> {}

/** A secret as the file names it: never its value, only where to read it. */
export type SecretRef = { readonly env: string } | { readonly file: string }

/** A secret that cannot be read: `reason` completes "secret …", e.g. `env BEDROCK_SECRET is not set`. */
export class SecretUnavailable extends Data.TaggedError("SecretUnavailable")<{ readonly reason: string }> {}

/** Reads a secret's value (a file's content trimmed); supplied by the config layer, a map in tests. */
export type SecretReader = (ref: SecretRef) => Effect.Effect<string, SecretUnavailable>

/** The provider/region pairs the providers serve: the only routes a file may name. */
export type ServedRegions = Readonly<Record<ProviderId, ReadonlyArray<string>>>

/** The endpoints (model families) of each provider: what a catalog entry may declare. */
export const providerFamilies: Readonly<Record<ProviderId, ReadonlyArray<ModelFamily>>> = {
  provider_a: ["chat_completions", "embeddings"],
  provider_b: ["messages"],
  provider_c: ["fim"]
}

/** Which providers each kind of upstream can serve. */
const kindProviders: Readonly<Record<UpstreamKindName, ReadonlyArray<ProviderId>>> = {
  native: providerIds,
  azure: ["provider_a"],
  bedrock: ["provider_b"],
  vertex: ["provider_b"]
}

export const DEFAULT_COOLDOWN_SECONDS = 30

// ---- the file's schema -------------------------------------------------------------------------------------

/** A message that replaces whatever the inner schemas would say. */
const says = (text: string) => ({ message: () => ({ message: text, override: true }) })

const SecretRefSchema = Schema.Union(
  Schema.Struct({ env: Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)) }),
  Schema.Struct({ file: Schema.String.pipe(Schema.minLength(1)) })
).annotations(says("must be { env: NAME } or { file: PATH } (secrets are never written in the file)"))

const isHttpRoot = (raw: string): boolean => {
  if (!/^https?:\/\/[^/?#]/i.test(raw)) return false
  const parsed = Either.try(() => new URL(raw))
  return Either.isRight(parsed) && parsed.right.username === "" && parsed.right.password === "" &&
    parsed.right.search === "" && parsed.right.hash === "" && !/[?#]/.test(raw)
}

const HttpUrl = Schema.String.pipe(
  Schema.filter(isHttpRoot),
  Schema.annotations(says("must be an absolute http(s) URL without credentials, ?query or #fragment"))
)

const Weight = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n) && n > 0),
  Schema.annotations(says("must be a number > 0"))
)
const Priority = Schema.Number.pipe(
  Schema.filter((n) => Number.isSafeInteger(n) && n >= 0),
  Schema.annotations(says("must be an integer ≥ 0"))
)
const PositiveInt = Schema.Number.pipe(
  Schema.filter((n) => Number.isSafeInteger(n) && n > 0),
  Schema.annotations(says("must be a positive integer"))
)
const Price = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n) && n >= 0),
  Schema.annotations(says("must be a number ≥ 0 (US dollars per million tokens)"))
)
const Word = (what: string, pattern: RegExp) =>
  Schema.String.pipe(Schema.filter((s) => pattern.test(s)), Schema.annotations(says(`must be ${what}`)))

/** The gateway's model id → the upstream's id or deployment name; never empty (it would serve nothing). */
const ModelsMap = Schema.Record({ key: Schema.String, value: Word("a non-empty id without spaces", /^\S+$/) }).pipe(
  Schema.filter((models) => Object.keys(models).length > 0, { message: () => "must name at least one model" })
)

const ApiKeyAuth = Schema.Struct({ apiKey: SecretRefSchema })

const common = {
  name: Schema.String,
  weight: Schema.optional(Weight),
  priority: Schema.optional(Priority)
}

const NativeFile = Schema.Struct({ ...common, kind: Schema.Literal("native"), url: HttpUrl, auth: ApiKeyAuth, models: Schema.optional(ModelsMap) })

const AzureFile = Schema.Struct({
  ...common,
  kind: Schema.Literal("azure"),
  url: HttpUrl,
  apiVersion: Schema.optional(Word("a date-like api-version such as \"2024-10-21\" or \"2025-04-01-preview\"", /^\d{4}-\d{2}-\d{2}(-[a-z]+)?$/)),
  auth: ApiKeyAuth,
  models: ModelsMap
})

const BedrockFile = Schema.Struct({
  ...common,
  kind: Schema.Literal("bedrock"),
  region: Word("an AWS region such as eu-central-1", /^[a-z]{2}(-[a-z]+)+-\d+$/),
  url: Schema.optional(HttpUrl),
  // Omitted: the standard AWS credential chain.
  auth: Schema.optional(Schema.Struct({
    aws: Schema.Struct({ accessKeyId: SecretRefSchema, secretAccessKey: SecretRefSchema, sessionToken: Schema.optional(SecretRefSchema) })
  })),
  models: ModelsMap
})

const VertexFile = Schema.Struct({
  ...common,
  kind: Schema.Literal("vertex"),
  project: Word("a project id such as acme-ai", /^[a-z][a-z0-9.:-]*[a-z0-9]$/),
  location: Word("a location such as europe-west1 or global", /^[a-z]+(-[a-z0-9]+)*$/),
  url: Schema.optional(HttpUrl),
  auth: Schema.Struct({ gcpServiceAccount: SecretRefSchema }),
  models: ModelsMap
})

type DeploymentFile = typeof NativeFile.Type | typeof AzureFile.Type | typeof BedrockFile.Type | typeof VertexFile.Type

const families = ["chat_completions", "embeddings", "messages", "fim"] as const satisfies ReadonlyArray<ModelFamily>
const tokenizers = ["cl100k_base", "o200k_base", "estimate"] as const satisfies ReadonlyArray<TokenizerHint>

const CatalogEntryFile = Schema.Struct({
  id: Word("a model id without spaces", /^\S+$/),
  provider: ProviderIdSchema.annotations(says(`must be one of ${providerIds.join(", ")}`)),
  family: Schema.Literal(...families).annotations(says(`must be one of ${families.join(", ")}`)),
  contextTokens: PositiveInt,
  maxOutputTokens: Schema.optional(PositiveInt),
  pricesPerMillion: Schema.Struct({ input: Price, output: Price }),
  reasoning: Schema.optional(Schema.Boolean),
  tokenizer: Schema.optional(Schema.Literal(...tokenizers).annotations(says(`must be one of ${tokenizers.join(", ")}`)))
})
type CatalogEntryFile = typeof CatalogEntryFile.Type

const NonNegative = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n) && n >= 0),
  Schema.annotations(says("must be a number of seconds ≥ 0"))
)

/** The file's top level; routes and catalog entries are decoded one by one, so a refusal can name them. */
const RoutesFileTop = Schema.Struct({
  cooldownSeconds: Schema.optional(NonNegative),
  routes: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations(
    says("must be a mapping of routes (provider_a/eu, …) to lists of deployments")
  ),
  catalogMode: Schema.optional(Schema.Literal("extend", "replace").annotations(says("must be extend or replace"))),
  catalog: Schema.optional(Schema.Array(Schema.Unknown).annotations(says("must be a list of models { id, provider, family, … }")))
})

// ---- decoding with one-line refusals -----------------------------------------------------------------------

const strict = { onExcessProperty: "error", errors: "first" } as const

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, key) => typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`,
    ""
  )

/** The first decode issue as `field: what is wrong` (an unknown field named as such: typos must not pass). */
const firstIssue = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return error.message
  const at = pathText(issue.path)
  if (issue._tag === "Unexpected") return `unknown field ${at}`
  if (issue._tag === "Missing") return `${at} is required`
  return at === "" ? issue.message : `${at}: ${issue.message}`
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>, value: unknown, where: string): Either.Either<A, RoutesFileInvalid> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema, strict)(value),
    (error) => new RoutesFileInvalid({ problem: `${where}${firstIssue(error)}` })
  )

/** Each kind's fields, decoded strictly (an unknown field is refused). */
const decodeDeployment: Readonly<Record<UpstreamKindName, (raw: unknown, where: string) => Either.Either<DeploymentFile, RoutesFileInvalid>>> = {
  native: (raw, where) => decodeWith(NativeFile, raw, where),
  azure: (raw, where) => decodeWith(AzureFile, raw, where),
  bedrock: (raw, where) => decodeWith(BedrockFile, raw, where),
  vertex: (raw, where) => decodeWith(VertexFile, raw, where)
}

const invalid = (problem: string) => Either.left(new RoutesFileInvalid({ problem }))

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The content of the file as the YAML parser read it (YAML 1.2 reads JSON too; src/routesFileParser.ts), or the
 * parser's first error, on one line, with its position.
 */
const contentOf = (document: YAML.Document.Parsed): Either.Either<unknown, RoutesFileInvalid> => {
  const error = document.errors[0]
  // Its first line says what and where ("… at line 2, column 1:"); the rest is a drawing of the spot.
  if (error !== undefined) return invalid(`not valid YAML or JSON: ${error.message.split("\n")[0]?.replace(/:$/, "")}`)
  return Either.try({
    try: () => document.toJS({ maxAliasCount: 100 }) as unknown,
    catch: (cause) => new RoutesFileInvalid({ problem: `not valid YAML or JSON: ${cause instanceof Error ? cause.message.split("\n")[0] : "unreadable"}` })
  })
}

// ---- the catalog -------------------------------------------------------------------------------------------

const defaultTokenizer: Readonly<Record<ModelFamily, TokenizerHint>> = {
  chat_completions: "o200k_base",
  embeddings: "cl100k_base",
  messages: "estimate",
  fim: "estimate"
}

const catalogEntry = (entry: CatalogEntryFile, where: string): Either.Either<OperatorCatalog["models"][number], RoutesFileInvalid> => {
  const served = providerFamilies[entry.provider]
  if (!served.includes(entry.family)) return invalid(`${where}family ${entry.family} is not served by ${entry.provider} (${served.join(", ")})`)
  if (entry.family === "embeddings" && entry.maxOutputTokens !== undefined) return invalid(`${where}maxOutputTokens does not apply to embeddings`)
  if (entry.maxOutputTokens !== undefined && entry.maxOutputTokens > entry.contextTokens) {
    return invalid(`${where}maxOutputTokens (${entry.maxOutputTokens}) exceeds contextTokens (${entry.contextTokens})`)
  }
  if (entry.reasoning === true && entry.family !== "chat_completions") return invalid(`${where}reasoning applies to chat_completions models only`)
  return Either.right({
    info: {
      id: entry.id,
      provider: entry.provider,
      family: entry.family,
      contextLength: entry.contextTokens,
      maxOutputTokens: entry.maxOutputTokens,
      tokenizer: entry.tokenizer ?? defaultTokenizer[entry.family],
      reasoning: entry.reasoning ?? false
    },
    pricesPerMillion: entry.pricesPerMillion
  })
}

const decodeCatalog = (mode: OperatorCatalog["mode"], entries: ReadonlyArray<unknown>): Either.Either<OperatorCatalog, RoutesFileInvalid> =>
  Either.gen(function*() {
    const models: Array<OperatorCatalog["models"][number]> = []
    for (const [index, raw] of entries.entries()) {
      const label = isRecord(raw) && typeof raw.id === "string" ? ` (${raw.id})` : ""
      const where = `catalog[${index}]${label}: `
      const entry = yield* decodeWith(CatalogEntryFile, raw, where)
      if (models.some((model) => model.info.id === entry.id)) return yield* invalid(`${where}the id ${entry.id} is listed twice`)
      models.push(yield* catalogEntry(entry, where))
    }
    return { mode, models }
  })

/**
 * The catalog the gateway serves: the built-in one with the operator's entries replacing those of the same id
 * (in place) and the others appended, or the operator's alone in `replace` mode.
 */
export const catalogModels = (catalog: OperatorCatalog, builtIn: ReadonlyArray<ModelInfo> = MODEL_CATALOG): ReadonlyArray<ModelInfo> => {
  const own = catalog.models.map((model) => model.info)
  if (catalog.mode === "replace") return own
  const byId = new Map(own.map((info) => [info.id, info]))
  const builtInIds = new Set(builtIn.map((info) => info.id))
  return [...builtIn.map((info) => byId.get(info.id) ?? info), ...own.filter((info) => !builtInIds.has(info.id))]
}

// ---- routes and deployments --------------------------------------------------------------------------------

/** A deployment checked against everything but its secrets. */
interface PlannedDeployment {
  readonly where: string
  readonly route: RouteId
  readonly provider: ProviderId
  readonly region: string
  readonly file: DeploymentFile
}

/** The file checked, its secrets not yet read. */
export interface RoutesFilePlan {
  readonly cooldownSeconds: number
  readonly catalog: OperatorCatalog
  readonly routes: ReadonlyArray<{ readonly route: RouteId; readonly deployments: ReadonlyArray<PlannedDeployment> }>
}

const isUpstreamKind = (value: unknown): value is UpstreamKindName => upstreamKinds.some((kind) => kind === value)

/** A name as it appears in logs, metric labels and the ledger. */
const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

const parseRouteKey = (key: string, served: ServedRegions): { provider: ProviderId; region: string } | undefined => {
  const [provider, region, ...rest] = key.split("/")
  const id = providerIds.find((candidate) => candidate === provider)
  return id !== undefined && region !== undefined && rest.length === 0 && served[id].includes(region) ? { provider: id, region } : undefined
}

/** A deployment of an `eu` route must keep requests in the EU: no global endpoints or profiles, no other region. */
const residencyProblem = (file: DeploymentFile, region: string): string | undefined => {
  if (region !== "eu") return undefined
  switch (file.kind) {
    case "bedrock": {
      const global = Object.values(file.models).find((id) => id.startsWith("global."))
      if (global !== undefined) return `the model id ${global} is a global inference profile, which may process requests outside the EU; an eu route needs a regional id (eu. or a base model id)`
      if (!file.region.startsWith("eu-")) return `the AWS region ${file.region} is outside the EU; an eu route needs an eu-… region`
      return undefined
    }
    case "vertex":
      if (file.location === "global") return "the location global may process requests outside the EU; an eu route needs a European location such as europe-west1"
      if (!file.location.startsWith("europe-") && file.location !== "eu") return `the location ${file.location} is outside the EU; an eu route needs a European location such as europe-west1`
      return undefined
    case "native":
    case "azure":
      // Their hosts say nothing checkable about where they process: the operator's choice of URL.
      return undefined
  }
}

const planDeployment = (
  raw: unknown,
  at: { readonly key: string; readonly index: number; readonly provider: ProviderId; readonly region: string },
  catalog: ReadonlyArray<ModelInfo>,
  names: Map<string, string>
): Either.Either<PlannedDeployment, RoutesFileInvalid> =>
  Either.gen(function*() {
    const position = `routes.${at.key}[${at.index}]`
    if (!isRecord(raw)) return yield* invalid(`${position}: a deployment must be an object with name, kind, …`)
    const name = raw.name
    if (typeof name !== "string" || !namePattern.test(name)) {
      return yield* invalid(`${position}: name is required: up to 64 letters, digits, . _ - (it names the deployment in logs and metrics)`)
    }
    const where = `${position} (${name}): `
    const taken = names.get(name)
    if (taken !== undefined) return yield* invalid(`${where}the name ${name} is already used by ${taken}`)
    const kind = raw.kind
    if (!isUpstreamKind(kind)) return yield* invalid(`${where}unknown kind ${JSON.stringify(kind ?? null)} (${upstreamKinds.join(", ")})`)
    if (!kindProviders[kind].includes(at.provider)) return yield* invalid(`${where}kind ${kind} serves ${kindProviders[kind].join(", ")} only, not ${at.provider}`)
    const file = yield* decodeDeployment[kind](raw, where)
    for (const model of Object.keys(file.models ?? {})) {
      if (!catalog.some((info) => info.id === model && info.provider === at.provider)) {
        return yield* invalid(`${where}models: ${model} is not a ${at.provider} model of the catalog`)
      }
    }
    const residency = residencyProblem(file, at.region)
    if (residency !== undefined) return yield* invalid(`${where}refused on an eu route: ${residency}`)
    names.set(name, position)
    return { where, route: routeId(at.provider, at.region), provider: at.provider, region: at.region, file }
  })

/** Every check of the file that needs no secret: its shape, routes, kinds, names, models and residency. */
export const planRoutesFile = (parsed: unknown, served: ServedRegions): Either.Either<RoutesFilePlan, RoutesFileInvalid> =>
  Either.gen(function*() {
    if (!isRecord(parsed)) return yield* invalid("expected a mapping with routes (and cooldownSeconds, catalogMode, catalog)")
    const top = yield* decodeWith(RoutesFileTop, parsed, "")
    const catalog = yield* decodeCatalog(top.catalogMode ?? "extend", top.catalog ?? [])
    const models = catalogModels(catalog)
    const names = new Map<string, string>()
    const routes: Array<RoutesFilePlan["routes"][number]> = []
    for (const [key, list] of Object.entries(top.routes)) {
      const at = parseRouteKey(key, served)
      if (at === undefined) {
        const known = providerIds.flatMap((provider) => served[provider].map((region) => routeId(provider, region)))
        return yield* invalid(`routes.${key}: unknown route (the routes are ${known.join(", ")})`)
      }
      if (!Array.isArray(list) || list.length === 0) return yield* invalid(`routes.${key}: must be a non-empty list of deployments`)
      const deployments: Array<PlannedDeployment> = []
      for (const [index, raw] of list.entries()) {
        deployments.push(yield* planDeployment(raw, { key, index, ...at }, models, names))
      }
      routes.push({ route: routeId(at.provider, at.region), deployments })
    }
    return { cooldownSeconds: top.cooldownSeconds ?? DEFAULT_COOLDOWN_SECONDS, catalog, routes }
  })

// ---- secrets -----------------------------------------------------------------------------------------------

const ServiceAccountFile = Schema.Struct({
  type: Schema.optional(Schema.Literal("service_account").annotations(says("must be service_account (a service account's key file)"))),
  client_email: Word("an e-mail address", /^[^@\s]+@[^@\s]+$/),
  private_key: Word("a PEM private key", /-----BEGIN (RSA )?PRIVATE KEY-----/),
  private_key_id: Schema.optional(Schema.String),
  token_uri: HttpUrl
})

/** A service account's key file (its JSON text) as ServiceAccount; its other fields are ignored. */
export const parseServiceAccount = (text: string): Either.Either<ServiceAccount, string> =>
  Either.flatMap(
    Either.try({ try: () => JSON.parse(text) as unknown, catch: () => "is not JSON (a service account's key file)" }),
    (json) =>
      Either.mapLeft(
        Schema.decodeUnknownEither(ServiceAccountFile, { errors: "first" })(json),
        (error) => `is not a service account's key file (${firstIssue(error)})`
      )
  ).pipe(Either.map((file) => ({
    clientEmail: file.client_email,
    privateKey: Redacted.make(file.private_key),
    privateKeyId: file.private_key_id,
    tokenUri: file.token_uri
  })))

const refText = (ref: SecretRef): string => "env" in ref ? `env ${ref.env}` : `file ${ref.file}`

const trimSlash = (url: string): string => url.replace(/\/+$/, "")

const resolveDeployment = (planned: PlannedDeployment, readSecret: SecretReader): Effect.Effect<Deployment, RoutesFileInvalid> =>
  Effect.gen(function*() {
    const { file, where } = planned
    const secret = (ref: SecretRef, field: string) =>
      Effect.mapError(readSecret(ref), (unavailable) => new RoutesFileInvalid({ problem: `${where}${field}: secret ${unavailable.reason}` }))
    const base = {
      name: file.name,
      route: planned.route,
      provider: planned.provider,
      region: planned.region,
      priority: file.priority ?? 0,
      weight: file.weight ?? 1,
      models: file.models === undefined ? undefined : new Map(Object.entries(file.models)),
      simulated: false
    }
    switch (file.kind) {
      case "native":
        return { ...base, kind: "native", url: trimSlash(file.url), apiKey: Redacted.make(yield* secret(file.auth.apiKey, "auth.apiKey")) }
      case "azure":
        return {
          ...base,
          kind: "azure",
          url: trimSlash(file.url),
          apiVersion: file.apiVersion,
          apiKey: Redacted.make(yield* secret(file.auth.apiKey, "auth.apiKey"))
        }
      case "bedrock": {
        const aws = file.auth?.aws
        const credentials: AwsCredentials = aws === undefined ? { _tag: "Chain" } : {
          _tag: "Static",
          accessKeyId: yield* secret(aws.accessKeyId, "auth.aws.accessKeyId"),
          secretAccessKey: Redacted.make(yield* secret(aws.secretAccessKey, "auth.aws.secretAccessKey")),
          sessionToken: aws.sessionToken === undefined
            ? undefined
            : Redacted.make(yield* secret(aws.sessionToken, "auth.aws.sessionToken"))
        }
        return {
          ...base,
          kind: "bedrock",
          url: trimSlash(file.url ?? `https://bedrock-runtime.${file.region}.amazonaws.com`),
          awsRegion: file.region,
          credentials
        }
      }
      case "vertex": {
        const ref = file.auth.gcpServiceAccount
        const text = yield* secret(ref, "auth.gcpServiceAccount")
        const serviceAccount = yield* Either.mapLeft(
          parseServiceAccount(text),
          (problem) => new RoutesFileInvalid({ problem: `${where}auth.gcpServiceAccount: ${refText(ref)} ${problem}` })
        )
        const host = file.location === "global" ? "https://aiplatform.googleapis.com" : `https://${file.location}-aiplatform.googleapis.com`
        return { ...base, kind: "vertex", url: trimSlash(file.url ?? host), project: file.project, location: file.location, serviceAccount }
      }
    }
  })

/** The plan with its secrets read, in the file's order. */
export const resolveRoutesFile = (plan: RoutesFilePlan, readSecret: SecretReader): Effect.Effect<RoutesSetting, RoutesFileInvalid> =>
  Effect.gen(function*() {
    const routes = new Map<RouteId, ReadonlyArray<Deployment>>()
    for (const { deployments, route } of plan.routes) {
      routes.set(route, yield* Effect.forEach(deployments, (planned) => resolveDeployment(planned, readSecret)))
    }
    return { cooldownSeconds: plan.cooldownSeconds, routes, catalog: plan.catalog }
  })

/** The file, as the YAML parser read it, to its RoutesSetting: checked, its secrets read. */
export const readRoutesFile = (document: YAML.Document.Parsed, served: ServedRegions, readSecret: SecretReader): Effect.Effect<RoutesSetting, RoutesFileInvalid> =>
  Either.flatMap(contentOf(document), (parsed) => planRoutesFile(parsed, served)).pipe(
    Effect.flatMap((plan) => resolveRoutesFile(plan, readSecret))
  )

// ---- the UPSTREAM_PROVIDER_* shorthand ---------------------------------------------------------------------

/** `UPSTREAM_<PROVIDER>_<REGION>_URL` / `_KEY`: a route of one native deployment. */
export interface ShorthandUpstream {
  readonly provider: ProviderId
  readonly region: string
  readonly url: string
  readonly apiKey: Redacted.Redacted<string>
}

export const shorthandDeployment = (upstream: ShorthandUpstream): NativeDeployment => ({
  kind: "native",
  name: `${upstream.provider}-${upstream.region}`,
  route: routeId(upstream.provider, upstream.region),
  provider: upstream.provider,
  region: upstream.region,
  priority: 0,
  weight: 1,
  models: undefined,
  url: trimSlash(upstream.url),
  simulated: false,
  apiKey: upstream.apiKey
})

export const emptyRoutesSetting: RoutesSetting = {
  cooldownSeconds: DEFAULT_COOLDOWN_SECONDS,
  routes: new Map(),
  catalog: { mode: "extend", models: [] }
}

/**
 * The file's routes with the shorthand's for the routes the file does not name (a route the file names replaces
 * its shorthand). A shorthand deployment's name must not be one the file already uses.
 */
export const withShorthand = (
  setting: RoutesSetting,
  shorthand: ReadonlyArray<ShorthandUpstream>
): Either.Either<RoutesSetting, RoutesFileInvalid> => {
  const routes = new Map(setting.routes)
  const names = new Map([...setting.routes.values()].flat().map((deployment) => [deployment.name, deployment]))
  for (const upstream of shorthand) {
    const deployment = shorthandDeployment(upstream)
    if (routes.has(deployment.route)) continue
    const taken = names.get(deployment.name)
    if (taken !== undefined) {
      return invalid(`routes.${taken.route} (${taken.name}): the name ${taken.name} is the one of the UPSTREAM_* shorthand of ${deployment.route}; choose another`)
    }
    routes.set(deployment.route, [deployment])
  }
  return Either.right({ ...setting, routes })
}
