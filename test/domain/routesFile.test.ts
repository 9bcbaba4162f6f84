import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Redacted } from "effect"
import type { Deployment, RoutesSetting } from "../../src/domain/deployments"
import { MODEL_CATALOG } from "../../src/domain/models"
import {
  catalogModels,
  readRoutesFile,
  type SecretReader,
  SecretUnavailable,
  type ServedRegions,
  withShorthand
} from "../../src/domain/routesFile"
import { parseRoutesFile } from "../../src/routesFileParser"

const served: ServedRegions = { provider_a: ["eu", "us"], provider_b: ["eu", "us"], provider_c: ["eu"] }

const privateKey = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
const serviceAccountJson = JSON.stringify({
  type: "service_account",
  project_id: "acme-ai",
  private_key_id: "key-1",
  private_key: privateKey,
  client_email: "gateway@acme-ai.example",
  token_uri: "https://oauth2.example.test/token"
})

const secrets: Record<string, string> = {
  "env:AZURE_SE_KEY": "azure-key",
  "env:PROVIDER_A_EU_KEY": "native-key",
  "env:BEDROCK_KEY_ID": "AKIDEXAMPLE",
  "env:BEDROCK_SECRET": "bedrock-secret",
  "env:BEDROCK_TOKEN": "bedrock-token",
  "file:/etc/wsapi/vertex-sa.json": serviceAccountJson,
  "env:NOT_A_SERVICE_ACCOUNT": "{\"type\":\"authorized_user\",\"client_email\":\"a@b\"}"
}

/** Secrets from a map, as the config layer reads them from the environment and files. */
const readSecret: SecretReader = (ref) => {
  const key = "env" in ref ? `env:${ref.env}` : `file:${ref.file}`
  const value = secrets[key]
  return value === undefined
    ? Effect.fail(new SecretUnavailable({ reason: "env" in ref ? `env ${ref.env} is not set` : `file ${ref.file} cannot be read (ENOENT)` }))
    : Effect.succeed(value)
}

const read = (text: string): Either.Either<RoutesSetting, string> =>
  Effect.runSync(Effect.either(readRoutesFile(parseRoutesFile(text), served, readSecret)).pipe(Effect.map(Either.mapLeft((invalid) => invalid.problem))))

const settingOf = (text: string): RoutesSetting =>
  Either.getOrElse(read(text), (problem) => {
    throw new Error(`refused: ${problem}`)
  })

const problemOf = (text: string): string => Either.match(read(text), { onLeft: (problem) => problem, onRight: () => "accepted" })

/** The DESIGN's example, with a vertex deployment in an EU location beside it. */
const designExample = `
cooldownSeconds: 20
routes:
  provider_a/eu:
    - name: azure-sweden
      kind: azure
      url: https://contoso-se.openai.azure.com/
      apiVersion: "2024-10-21"
      auth: { apiKey: { env: AZURE_SE_KEY } }
      models:
        chatgen-4o: chatgen-4o-prod
        text-embedding-ada-002: ada-prod
      weight: 3
    - name: provider-a-eu
      kind: native
      url: https://eu.api.provider-a.example
      auth: { apiKey: { env: PROVIDER_A_EU_KEY } }
      priority: 1
  provider_b/eu:
    - name: bedrock-frankfurt
      kind: bedrock
      region: eu-central-1
      auth: { aws: { accessKeyId: { env: BEDROCK_KEY_ID }, secretAccessKey: { env: BEDROCK_SECRET }, sessionToken: { env: BEDROCK_TOKEN } } }
      models: { assistantmodel-sonnet-4-5-20250929: "eu.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0" }
    - name: vertex-belgium
      kind: vertex
      project: acme-ai
      location: europe-west1
      auth: { gcpServiceAccount: { file: /etc/wsapi/vertex-sa.json } }
      models: { assistantmodel-sonnet-4-5-20250929: assistantmodel-sonnet-4-5@20250929 }
      priority: 1
  provider_b/us:
    - name: vertex-global
      kind: vertex
      project: acme-ai
      location: global
      auth: { gcpServiceAccount: { file: /etc/wsapi/vertex-sa.json } }
      models: { assistantmodel-sonnet-4-5-20250929: assistantmodel-sonnet-4-5@20250929 }
    - name: bedrock-chain
      kind: bedrock
      region: us-east-1
      url: http://127.0.0.1:9999
      models: { assistantmodel-sonnet-4-5-20250929: "global.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0" }
`

const deploymentsOf = (setting: RoutesSetting, route: string): ReadonlyArray<Deployment> =>
  [...setting.routes.entries()].find(([id]) => id === route)?.[1] ?? []

/** Redacted values compared by what they hide. */
const revealed = (value: unknown): unknown => {
  if (Redacted.isRedacted(value)) return `redacted:${String(Redacted.value(value))}`
  if (value instanceof Map) return Object.fromEntries(value)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined).map(([key, field]) => [key, revealed(field)]))
}

describe("the routes file", () => {
  it("resolves a deployment of each kind to its Deployment, in the file's order", () => {
    const setting = settingOf(designExample)
    expect(setting.cooldownSeconds).toBe(20)
    expect([...setting.routes.keys()]).toEqual(["provider_a/eu", "provider_b/eu", "provider_b/us"])
    const [azure, native] = deploymentsOf(setting, "provider_a/eu").map(revealed)
    expect(azure).toEqual({
      name: "azure-sweden",
      route: "provider_a/eu",
      provider: "provider_a",
      region: "eu",
      priority: 0,
      weight: 3,
      models: { "chatgen-4o": "chatgen-4o-prod", "text-embedding-ada-002": "ada-prod" },
      simulated: false,
      kind: "azure",
      url: "https://contoso-se.openai.azure.com",
      apiVersion: "2024-10-21",
      apiKey: "redacted:azure-key"
    })
    expect(native).toEqual({
      name: "provider-a-eu",
      route: "provider_a/eu",
      provider: "provider_a",
      region: "eu",
      priority: 1,
      weight: 1,
      simulated: false,
      kind: "native",
      url: "https://eu.api.provider-a.example",
      apiKey: "redacted:native-key"
    })
    expect(deploymentsOf(setting, "provider_a/eu")[1]?.models).toBeUndefined()

    const [bedrock, vertex] = deploymentsOf(setting, "provider_b/eu").map(revealed)
    expect(bedrock).toEqual({
      name: "bedrock-frankfurt",
      route: "provider_b/eu",
      provider: "provider_b",
      region: "eu",
      priority: 0,
      weight: 1,
      models: { "assistantmodel-sonnet-4-5-20250929": "eu.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0" },
      simulated: false,
      kind: "bedrock",
      url: "https://bedrock-runtime.eu-central-1.amazonaws.com",
      awsRegion: "eu-central-1",
      credentials: { _tag: "Static", accessKeyId: "AKIDEXAMPLE", secretAccessKey: "redacted:bedrock-secret", sessionToken: "redacted:bedrock-token" }
    })
    expect(vertex).toEqual({
      name: "vertex-belgium",
      route: "provider_b/eu",
      provider: "provider_b",
      region: "eu",
      priority: 1,
      weight: 1,
      models: { "assistantmodel-sonnet-4-5-20250929": "assistantmodel-sonnet-4-5@20250929" },
      simulated: false,
      kind: "vertex",
      url: "https://europe-west1-aiplatform.googleapis.com",
      project: "acme-ai",
      location: "europe-west1",
      serviceAccount: {
        clientEmail: "gateway@acme-ai.example",
        privateKey: `redacted:${privateKey}`,
        privateKeyId: "key-1",
        tokenUri: "https://oauth2.example.test/token"
      }
    })

    const [global, chain] = deploymentsOf(setting, "provider_b/us")
    expect(global?.url).toBe("https://aiplatform.googleapis.com")
    expect(chain?.kind === "bedrock" && chain.credentials).toEqual({ _tag: "Chain" })
    expect(chain?.url).toBe("http://127.0.0.1:9999")
    expect(setting.catalog).toEqual({ mode: "extend", models: [] })
  })

  it("reads JSON as well as YAML, with the defaults of what it leaves out", () => {
    const json = JSON.stringify({
      routes: { "provider_c/eu": [{ name: "fim-eu", kind: "native", url: "https://fim.example", auth: { apiKey: { env: "PROVIDER_A_EU_KEY" } } }] }
    })
    const setting = settingOf(json)
    expect(setting.cooldownSeconds).toBe(30)
    expect(deploymentsOf(setting, "provider_c/eu").map(revealed)).toEqual([{
      name: "fim-eu",
      route: "provider_c/eu",
      provider: "provider_c",
      region: "eu",
      priority: 0,
      weight: 1,
      simulated: false,
      kind: "native",
      url: "https://fim.example",
      apiKey: "redacted:native-key"
    }])
  })
})

/** One native deployment of provider_a/eu, with `extra` lines inside it (indented as its fields). */
const nativeWith = (extra: string, route = "provider_a/eu") => `
routes:
  ${route}:
    - name: native-eu
      kind: native
      url: https://eu.api.provider-a.example
      auth: { apiKey: { env: PROVIDER_A_EU_KEY } }
${extra.split("\n").filter((line) => line !== "").map((line) => `      ${line}`).join("\n")}
`

const bedrockWith = (fields: string, route = "provider_b/eu") => `
routes:
  ${route}:
    - name: bedrock-frankfurt
      kind: bedrock
${fields.split("\n").filter((line) => line !== "").map((line) => `      ${line}`).join("\n")}
`

const bedrockAuth = "auth: { aws: { accessKeyId: { env: BEDROCK_KEY_ID }, secretAccessKey: { env: BEDROCK_SECRET } } }"
const bedrockModels = "models: { assistantmodel-sonnet-4-5-20250929: \"eu.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0\" }"

describe("refusals: one line naming the route and deployment", () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["a file that is not YAML", "routes: [\n  - a: 1\n b", "not valid YAML or JSON: Block collections are not allowed within flow collections at line 2, column 3"],
    ["a duplicate key", "routes: {}\nroutes: {}", "not valid YAML or JSON: Map keys must be unique at line 2, column 1"],
    ["an alias to nothing", "routes: *nowhere", "not valid YAML or JSON"],
    ["a file that is no mapping", "- 1\n- 2", "expected a mapping with routes"],
    ["a missing routes", "cooldownSeconds: 3", "routes is required"],
    ["routes that are no mapping", "routes:\n", "routes: must be a mapping of routes (provider_a/eu, …) to lists of deployments"],
    ["a catalog that is no list", "routes: {}\ncatalog: { id: x }", "catalog: must be a list of models { id, provider, family, … }"],
    ["an unknown top-level key", "routes: {}\nrouts: {}", "unknown field routs"],
    ["a negative cooldown", "cooldownSeconds: -1\nroutes: {}", "cooldownSeconds: must be a number of seconds ≥ 0"],
    ["an unknown route", nativeWith("", "provider_c/us"), "routes.provider_c/us: unknown route (the routes are provider_a/eu, provider_a/us, provider_b/eu, provider_b/us, provider_c/eu)"],
    ["an empty route", "routes:\n  provider_a/eu: []", "routes.provider_a/eu: must be a non-empty list of deployments"],
    ["a deployment without a name", "routes:\n  provider_a/eu:\n    - kind: native", "routes.provider_a/eu[0]: name is required"],
    ["an unknown kind", nativeWith("").replace("kind: native", "kind: nativ"), "routes.provider_a/eu[0] (native-eu): unknown kind \"nativ\" (native, azure, bedrock, vertex)"],
    ["a kind on the wrong provider", bedrockWith(`region: eu-central-1\n${bedrockModels}`, "provider_a/eu"), "routes.provider_a/eu[0] (bedrock-frankfurt): kind bedrock serves provider_b only, not provider_a"],
    ["an unknown field", nativeWith("regoin: eu-central-1"), "routes.provider_a/eu[0] (native-eu): unknown field regoin"],
    ["a field of another kind", nativeWith("apiVersion: \"2024-10-21\""), "routes.provider_a/eu[0] (native-eu): unknown field apiVersion"],
    ["a url that is not http(s)", nativeWith("").replace("https://eu.api.provider-a.example", "ftp://eu.example"), "routes.provider_a/eu[0] (native-eu): url: must be an absolute http(s) URL"],
    ["a url with a query", nativeWith("").replace("https://eu.api.provider-a.example", "https://eu.example/?key=1"), "routes.provider_a/eu[0] (native-eu): url: must be an absolute http(s) URL without credentials, ?query or #fragment"],
    ["a secret written in the file", nativeWith("").replace("{ apiKey: { env: PROVIDER_A_EU_KEY } }", "{ apiKey: sk-123 }"), "routes.provider_a/eu[0] (native-eu): auth.apiKey: must be { env: NAME } or { file: PATH } (secrets are never written in the file)"],
    ["a missing secret", bedrockWith(`region: eu-central-1\n${bedrockAuth.replace("BEDROCK_SECRET", "BEDROCK_SECRET_2")}\n${bedrockModels}`), "routes.provider_b/eu[0] (bedrock-frankfurt): auth.aws.secretAccessKey: secret env BEDROCK_SECRET_2 is not set"],
    ["a missing secret file", nativeWith("").replace("{ env: PROVIDER_A_EU_KEY }", "{ file: /run/secrets/none }"), "routes.provider_a/eu[0] (native-eu): auth.apiKey: secret file /run/secrets/none cannot be read (ENOENT)"],
    ["a zero weight", nativeWith("weight: 0"), "routes.provider_a/eu[0] (native-eu): weight: must be a number > 0"],
    ["a fractional priority", nativeWith("priority: 1.5"), "routes.provider_a/eu[0] (native-eu): priority: must be an integer ≥ 0"],
    ["a models map naming a model outside the catalog", nativeWith("models: { chatgen-9: x }"), "routes.provider_a/eu[0] (native-eu): models: chatgen-9 is not a provider_a model of the catalog"],
    ["a models map naming another provider's model", nativeWith("models: { assistantmodel-sonnet-4-5-20250929: x }"), "models: assistantmodel-sonnet-4-5-20250929 is not a provider_a model of the catalog"],
    ["an empty models map", nativeWith("models: {}"), "routes.provider_a/eu[0] (native-eu): models: must name at least one model"],
    ["an azure deployment without models", `
routes:
  provider_a/us:
    - name: azure-east
      kind: azure
      url: https://contoso-us.openai.azure.com
      auth: { apiKey: { env: AZURE_SE_KEY } }
`, "routes.provider_a/us[0] (azure-east): models is required"],
    ["a bedrock deployment without region", bedrockWith(bedrockModels), "routes.provider_b/eu[0] (bedrock-frankfurt): region is required"],
    ["a vertex deployment without a service account", `
routes:
  provider_b/us:
    - name: vertex-us
      kind: vertex
      project: acme-ai
      location: us-east5
      auth: { gcpServiceAccount: { env: NOT_A_SERVICE_ACCOUNT } }
      models: { assistantmodel-sonnet-4-5-20250929: assistantmodel-sonnet-4-5@20250929 }
`, "routes.provider_b/us[0] (vertex-us): auth.gcpServiceAccount: env NOT_A_SERVICE_ACCOUNT is not a service account's key file (type: must be service_account"],
    ["a duplicate name across routes", `
routes:
  provider_a/eu:
    - { name: twice, kind: native, url: "https://a.example", auth: { apiKey: { env: PROVIDER_A_EU_KEY } } }
  provider_c/eu:
    - { name: twice, kind: native, url: "https://c.example", auth: { apiKey: { env: PROVIDER_A_EU_KEY } } }
`, "routes.provider_c/eu[0] (twice): the name twice is already used by routes.provider_a/eu[0]"],
    ["a catalog entry with a bad provider/family pair", `
routes: {}
catalog:
  - { id: chatgen-x, provider: provider_b, family: chat_completions, contextTokens: 1000, pricesPerMillion: { input: 1, output: 2 } }
`, "catalog[0] (chatgen-x): family chat_completions is not served by provider_b (messages)"],
    ["a catalog entry with a non-positive limit", `
routes: {}
catalog:
  - { id: chatgen-x, provider: provider_a, family: chat_completions, contextTokens: 0, pricesPerMillion: { input: 1, output: 2 } }
`, "catalog[0] (chatgen-x): contextTokens: must be a positive integer"],
    ["a catalog entry with a negative output limit", `
routes: {}
catalog:
  - { id: chatgen-x, provider: provider_a, family: chat_completions, contextTokens: 10, maxOutputTokens: -1, pricesPerMillion: { input: 1, output: 2 } }
`, "catalog[0] (chatgen-x): maxOutputTokens: must be a positive integer"],
    ["a catalog entry with an unknown field", `
routes: {}
catalog:
  - { id: chatgen-x, provider: provider_a, family: chat_completions, contextTokens: 10, pricesPerMillion: { input: 1, output: 2 }, price: 3 }
`, "catalog[0] (chatgen-x): unknown field price"],
    ["a bad catalogMode", "routes: {}\ncatalogMode: merge", "catalogMode: must be extend or replace"]
  ]

  for (const [what, text, line] of cases) {
    it(`refuses ${what}`, () => {
      const problem = problemOf(text)
      expect(problem).toContain(line)
      expect(problem).not.toContain("\n")
    })
  }
})

describe("residency", () => {
  it("refuses a bedrock global. model id on an eu route, naming it and why", () => {
    expect(problemOf(bedrockWith(`region: eu-central-1\nmodels: { assistantmodel-sonnet-4-5-20250929: "global.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0" }`)))
      .toBe(
        "routes.provider_b/eu[0] (bedrock-frankfurt): refused on an eu route: the model id global.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0 is a global inference profile, which may process requests outside the EU; an eu route needs a regional id (eu. or a base model id)"
      )
  })

  it("refuses a bedrock region outside the EU on an eu route", () => {
    expect(problemOf(bedrockWith(`region: us-east-1\n${bedrockModels}`))).toContain(
      "routes.provider_b/eu[0] (bedrock-frankfurt): refused on an eu route: the AWS region us-east-1 is outside the EU"
    )
  })

  it("refuses a vertex global location, or one outside Europe, on an eu route", () => {
    const vertexAt = (location: string) => `
routes:
  provider_b/eu:
    - name: vertex-eu
      kind: vertex
      project: acme-ai
      location: ${location}
      auth: { gcpServiceAccount: { file: /etc/wsapi/vertex-sa.json } }
      models: { assistantmodel-sonnet-4-5-20250929: assistantmodel-sonnet-4-5@20250929 }
`
    expect(problemOf(vertexAt("global"))).toBe(
      "routes.provider_b/eu[0] (vertex-eu): refused on an eu route: the location global may process requests outside the EU; an eu route needs a European location such as europe-west1"
    )
    expect(problemOf(vertexAt("us-east5"))).toContain("refused on an eu route: the location us-east5 is outside the EU")
    expect(problemOf(vertexAt("europe-west4"))).toBe("accepted")
  })

  it("lets a us route use global profiles and locations", () => {
    const setting = settingOf(designExample)
    expect(deploymentsOf(setting, "provider_b/us").map((deployment) => deployment.name)).toEqual(["vertex-global", "bedrock-chain"])
  })
})

describe("the operator's catalog", () => {
  const entry = `{ id: chatgen-4o-mini-2024-07-18, provider: provider_a, family: chat_completions, contextTokens: 128000, maxOutputTokens: 16384, pricesPerMillion: { input: 0.15, output: 0.6 } }`
  const replacing = `{ id: chatgen-4o, provider: provider_a, family: chat_completions, contextTokens: 64000, maxOutputTokens: 4096, pricesPerMillion: { input: 2.5, output: 10 }, reasoning: true, tokenizer: cl100k_base }`

  it("extends the built-in catalog: new ids appended, same ids replaced in place, usable in models maps", () => {
    const setting = settingOf(`
catalog:
  - ${entry}
  - ${replacing}
routes:
  provider_a/eu:
    - name: azure-sweden
      kind: azure
      url: https://contoso-se.openai.azure.com
      auth: { apiKey: { env: AZURE_SE_KEY } }
      models: { chatgen-4o-mini-2024-07-18: chatgen-4o-mini-prod }
`)
    expect(setting.catalog.mode).toBe("extend")
    expect(setting.catalog.models).toEqual([
      {
        info: {
          id: "chatgen-4o-mini-2024-07-18",
          provider: "provider_a",
          family: "chat_completions",
          contextLength: 128_000,
          maxOutputTokens: 16_384,
          tokenizer: "o200k_base",
          reasoning: false
        },
        pricesPerMillion: { input: 0.15, output: 0.6 }
      },
      {
        info: {
          id: "chatgen-4o",
          provider: "provider_a",
          family: "chat_completions",
          contextLength: 64_000,
          maxOutputTokens: 4_096,
          tokenizer: "cl100k_base",
          reasoning: true
        },
        pricesPerMillion: { input: 2.5, output: 10 }
      }
    ])
    const merged = catalogModels(setting.catalog)
    expect(merged.length).toBe(MODEL_CATALOG.length + 1)
    expect(merged.findIndex((info) => info.id === "chatgen-4o")).toBe(MODEL_CATALOG.findIndex((info) => info.id === "chatgen-4o"))
    expect(merged.find((info) => info.id === "chatgen-4o")?.contextLength).toBe(64_000)
    expect(merged.at(-1)?.id).toBe("chatgen-4o-mini-2024-07-18")
  })

  it("replaces it: only the file's models exist, for the catalog and the models maps alike", () => {
    const catalog = `catalogMode: replace\ncatalog:\n  - ${entry}\n`
    const setting = settingOf(`${catalog}routes: {}`)
    expect(catalogModels(setting.catalog).map((info) => info.id)).toEqual(["chatgen-4o-mini-2024-07-18"])
    expect(problemOf(`${catalog}${nativeWith("models: { chatgen-4o: chatgen-4o-prod }").replace(/^\nroutes:/, "routes:")}`)).toBe(
      "routes.provider_a/eu[0] (native-eu): models: chatgen-4o is not a provider_a model of the catalog"
    )
  })

  it("refuses the same id twice in the file's catalog", () => {
    expect(problemOf(`routes: {}\ncatalog:\n  - ${entry}\n  - ${entry}`)).toBe(
      "catalog[1] (chatgen-4o-mini-2024-07-18): the id chatgen-4o-mini-2024-07-18 is listed twice"
    )
  })
})

describe("the UPSTREAM_PROVIDER_* shorthand", () => {
  const shorthand = [
    { provider: "provider_a" as const, region: "eu", url: "https://shorthand-a.example/", apiKey: Redacted.make("a") },
    { provider: "provider_c" as const, region: "eu", url: "https://shorthand-c.example", apiKey: Redacted.make("c") }
  ]

  it("fills the routes the file does not name with one native deployment each; the file's routes win", () => {
    const merged = Either.getOrThrow(withShorthand(settingOf(designExample), shorthand))
    expect(deploymentsOf(merged, "provider_a/eu").map((deployment) => deployment.name)).toEqual(["azure-sweden", "provider-a-eu"])
    expect(deploymentsOf(merged, "provider_c/eu").map(revealed)).toEqual([{
      kind: "native",
      name: "provider_c-eu",
      route: "provider_c/eu",
      provider: "provider_c",
      region: "eu",
      priority: 0,
      weight: 1,
      url: "https://shorthand-c.example",
      simulated: false,
      apiKey: "redacted:c"
    }])
    expect(merged.routes.has("provider_a/us")).toBe(false)
  })

  it("refuses a file deployment that takes a shorthand deployment's name", () => {
    const problem = Either.match(withShorthand(settingOf(nativeWith("").replace("name: native-eu", "name: provider_c-eu")), shorthand), {
      onLeft: (invalid) => invalid.problem,
      onRight: () => "accepted"
    })
    expect(problem).toContain("routes.provider_a/eu (provider_c-eu): the name provider_c-eu is the one of the UPSTREAM_* shorthand of provider_c/eu")
  })
})
