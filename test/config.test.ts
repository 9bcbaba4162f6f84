import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { appConfig, type AppConfigShape, describeConfigError } from "../src/config"
import { tempDir } from "./support/tempDirs"

/** The settings read from exactly this environment, or the one line a bad one stops start-up with. */
const settingsOf = (env: Record<string, string>): Effect.Effect<Either.Either<AppConfigShape, string>> =>
  Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))).pipe(
    Effect.map(Either.mapLeft(describeConfigError))
  )

const read = (env: Record<string, string>): Either.Either<AppConfigShape, string> => Effect.runSync(settingsOf(env))

const errorOf = (env: Record<string, string>): string =>
  Either.match(read(env), { onLeft: (line) => line, onRight: () => "accepted" })

/** The same with a routes file: its parser is imported then, so the read is asynchronous. */
const readWithFile = (env: Record<string, string>): Promise<Either.Either<AppConfigShape, string>> => Effect.runPromise(settingsOf(env))

const errorWithFile = async (env: Record<string, string>): Promise<string> =>
  Either.match(await readWithFile(env), { onLeft: (line) => line, onRight: () => "accepted" })

const tempFile = (name: string, content: string): string => {
  const file = path.join(tempDir("ws-config-"), name)
  fs.writeFileSync(file, content)
  return file
}

describe("configuration", () => {
  it("reads the default price table with the settings", () => {
    const config = Either.getOrThrow(read({}))
    expect(config.priceTableFile).toMatch(/config\/prices\.json$/)
    expect(Object.keys(config.priceTable.models).length).toBeGreaterThan(0)
  })

  it("uses the price table of PRICE_TABLE_FILE", () => {
    const file = tempFile("prices.json", JSON.stringify({ models: { "chatgen-4o": { input: 1, output: 2 } } }))
    const config = Either.getOrThrow(read({ PRICE_TABLE_FILE: file }))
    expect(config.priceTable.models).toEqual({ "chatgen-4o": { input: 1, output: 2 } })
  })

  it("refuses a missing, unreadable or invalid PRICE_TABLE_FILE with one line naming it", () => {
    const missing = path.join(os.tmpdir(), "ws-config-no-such-dir", "prices.json")
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      [missing, /cannot be read \(ENOENT\)/],
      [path.dirname(tempFile("x", "")), /cannot be read \(EISDIR\)/],
      [tempFile("bad.json", "{\"models\":"), /not a valid price table/],
      [tempFile("neg.json", JSON.stringify({ models: { m: { input: -1, output: 1 } } })), /models\.m\.input: a price must be a number ≥ 0/],
      [tempFile("arr.json", "[]"), /not a valid price table/]
    ]
    for (const [file, problem] of cases) {
      const line = errorOf({ PRICE_TABLE_FILE: file })
      expect(line).toMatch(new RegExp(`^Invalid configuration: PRICE_TABLE_FILE: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `))
      expect(line).toMatch(problem)
      expect(line).toContain("expected a readable JSON file")
      expect(line).not.toContain("\n")
    }
  })
})

describe("HOST and PUBLIC_URL", () => {
  it("refuse an empty or malformed HOST with one line naming it", () => {
    for (const bad of ["", " ", "http://host", "host:8080/x"]) {
      expect(errorOf({ HOST: bad }), JSON.stringify(bad)).toMatch(/^Invalid configuration: HOST: Expected a host name or IP address/)
    }
  })

  it("listen on loopback unless HOST says otherwise", () => {
    expect(Either.getOrThrow(read({})).host).toBe("127.0.0.1")
    expect(Either.getOrThrow(read({ HOST: "0.0.0.0" })).host).toBe("0.0.0.0")
  })

  it("derive PUBLIC_URL from a good HOST and PORT, a wildcard HOST giving loopback links", () => {
    const publicUrlOf = (env: Record<string, string>) => Either.getOrThrow(read(env)).publicUrl
    expect(publicUrlOf({})).toBe("http://127.0.0.1:8080")
    expect(publicUrlOf({ PORT: "9000" })).toBe("http://127.0.0.1:9000")
    expect(publicUrlOf({ HOST: "0.0.0.0", PORT: "9000" })).toBe("http://127.0.0.1:9000")
    expect(publicUrlOf({ HOST: "::" })).toBe("http://127.0.0.1:8080")
    expect(publicUrlOf({ HOST: "0.0.0.0", PUBLIC_URL: "https://api.example.com" })).toBe("https://api.example.com")
    expect(publicUrlOf({ HOST: "api.internal", PORT: "9000" })).toBe("http://api.internal:9000")
    expect(publicUrlOf({ HOST: "::1" })).toBe("http://[::1]:8080")
  })

  it("refuse a PUBLIC_URL with a query or fragment, which would break download links", () => {
    for (const bad of ["https://api.example.com/?a=1", "https://api.example.com#top", "https://api.example.com/x?", "example.com", ""]) {
      expect(errorOf({ PUBLIC_URL: bad }), bad).toMatch(
        /^Invalid configuration: PUBLIC_URL: Expected an absolute http\(s\) URL without \?query or #fragment/
      )
    }
    expect(Either.getOrThrow(read({ PUBLIC_URL: "https://api.example.com/gateway/" })).publicUrl).toBe(
      "https://api.example.com/gateway"
    )
  })

  it("read CREDENTIALS_KEY and CREDENTIALS_KEY_PREVIOUS, and refuse a malformed one with one line naming it", () => {
    const hex = "ab".repeat(32)
    const base64 = Buffer.alloc(32, 9).toString("base64")
    const keys = Either.getOrThrow(read({ CREDENTIALS_KEY: hex, CREDENTIALS_KEY_PREVIOUS: base64 })).credentialsKeys
    expect(keys.current._tag === "Some" && keys.previous._tag === "Some" && keys.current.value.id !== keys.previous.value.id).toBe(true)
    expect(Either.getOrThrow(read({})).credentialsKeys.current._tag).toBe("None")
    expect(errorOf({ CREDENTIALS_KEY: "too-short" })).toMatch(/^Invalid configuration: CREDENTIALS_KEY: Expected 32 bytes as base64/)
    expect(errorOf({ CREDENTIALS_KEY: hex, CREDENTIALS_KEY_PREVIOUS: hex.slice(2) })).toMatch(
      /^Invalid configuration: CREDENTIALS_KEY_PREVIOUS: Expected 32 bytes/
    )
    expect(errorOf({ CREDENTIALS_KEY_PREVIOUS: hex })).toMatch(/CREDENTIALS_KEY_PREVIOUS is given without CREDENTIALS_KEY/)
    // The key itself never appears in the line.
    expect(errorOf({ CREDENTIALS_KEY: "a-secret-but-malformed-key" })).not.toContain("a-secret-but-malformed-key")
  })
})

describe("TRUSTED_PROXIES", () => {
  it("is none by default, and a list of addresses and ranges when set", () => {
    expect(Either.getOrThrow(read({})).trustedProxies._tag).toBe("None")
    const config = Either.getOrThrow(read({ TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1" }))
    expect(config.trustedProxies._tag === "Some" && config.trustedProxies.value.entries).toEqual(["10.0.0.0/8", "127.0.0.1"])
  })

  it("stops start-up with one line naming the entry that is neither", () => {
    expect(errorOf({ TRUSTED_PROXIES: "10.0.0.0/8, proxy.internal" })).toBe(
      "Invalid configuration: TRUSTED_PROXIES: 'proxy.internal' is not an IP address or CIDR range; expected addresses or ranges separated by commas, such as 10.0.0.0/8, 192.168.1.10, fd00::/8"
    )
  })
})

describe("export slots", () => {
  it("run two exports of a workspace at once and wait a minute by default; more than the instance runs is refused", () => {
    expect(Either.getOrThrow(read({})).exportSlots).toEqual({ perWorkspace: 2, maxWaitMs: 60_000 })
    expect(Either.getOrThrow(read({ EXPORT_CONCURRENCY_PER_WORKSPACE: "4", EXPORT_QUEUE_TIMEOUT_MS: "500" })).exportSlots).toEqual({
      perWorkspace: 4,
      maxWaitMs: 500
    })
    expect(errorOf({ EXPORT_CONCURRENCY_PER_WORKSPACE: "5" })).toMatch(
      /^Invalid configuration: EXPORT_CONCURRENCY_PER_WORKSPACE: Expected a positive integer, at most 4 \(the exports an instance runs at once\)$/
    )
    expect(errorOf({ EXPORT_QUEUE_TIMEOUT_MS: "0" })).toMatch(/^Invalid configuration: EXPORT_QUEUE_TIMEOUT_MS: Expected a positive integer/)
  })
})

describe("UPSTREAMS_FILE and the UPSTREAM_PROVIDER_* shorthand", () => {
  const routesFile = (text: string): string => tempFile("upstreams.yaml", text)
  const bedrockFile = `
routes:
  provider_b/eu:
    - name: bedrock-frankfurt
      kind: bedrock
      region: eu-central-1
      auth: { aws: { accessKeyId: { env: BEDROCK_KEY_ID }, secretAccessKey: { env: BEDROCK_SECRET } } }
      models: { assistantmodel-sonnet-4-5-20250929: "eu.provider_b.assistantmodel-sonnet-4-5-20250929-v1:0" }
`

  it("without a file, routes are the shorthand's alone, one native deployment each; others are absent", () => {
    const config = Either.getOrThrow(read({ UPSTREAM_PROVIDER_A_EU_URL: "https://a.example/", UPSTREAM_PROVIDER_A_EU_KEY: "key-a" }))
    expect(config.routes.cooldownSeconds).toBe(30)
    expect(config.routes.catalog).toEqual({ mode: "extend", models: [] })
    expect([...config.routes.routes.keys()]).toEqual(["provider_a/eu"])
    const [deployment] = config.routes.routes.get("provider_a/eu") ?? []
    expect(deployment).toMatchObject({ kind: "native", name: "provider_a-eu", url: "https://a.example", priority: 0, weight: 1, models: undefined })
    expect(deployment?.kind === "native" && Redacted.value(deployment.apiKey)).toBe("key-a")
    // The existing field is kept as it was, for the code that still reads it.
    expect(Option.map(config.upstreams.provider_a_eu, (upstream) => upstream.url)).toEqual(Option.some("https://a.example"))
  })

  it("takes the file's routes, its secrets from the environment and from files beside it; a route it names replaces the shorthand's", async () => {
    const file = routesFile(`
routes:
  provider_a/eu:
    - name: azure-sweden
      kind: azure
      url: https://contoso-se.openai.azure.com
      auth: { apiKey: { file: azure.key } }
      models: { chatgen-4o: chatgen-4o-prod }
${bedrockFile.replace("routes:\n", "")}`)
    fs.writeFileSync(path.join(path.dirname(file), "azure.key"), "  azure-key-from-file\n")
    const config = Either.getOrThrow(await readWithFile({
      UPSTREAMS_FILE: file,
      BEDROCK_KEY_ID: "AKIDEXAMPLE",
      BEDROCK_SECRET: "bedrock-secret",
      UPSTREAM_PROVIDER_A_EU_URL: "https://a.example",
      UPSTREAM_PROVIDER_B_US_URL: "https://b-us.example",
      UPSTREAM_PROVIDER_B_US_KEY: "key-b-us"
    }))
    const routes = config.routes.routes
    expect([...routes.keys()].sort()).toEqual(["provider_a/eu", "provider_b/eu", "provider_b/us"])
    const [azure] = routes.get("provider_a/eu") ?? []
    expect(azure?.name).toBe("azure-sweden")
    expect(azure?.kind === "azure" && Redacted.value(azure.apiKey)).toBe("azure-key-from-file")
    const [bedrock] = routes.get("provider_b/eu") ?? []
    expect(bedrock?.kind === "bedrock" && bedrock.credentials._tag === "Static" && Redacted.value(bedrock.credentials.secretAccessKey))
      .toBe("bedrock-secret")
    expect(routes.get("provider_b/us")?.map((deployment) => [deployment.kind, deployment.name, deployment.url])).toEqual([
      ["native", "provider_b-us", "https://b-us.example"]
    ])
    expect(config.upstreamMaxAttempts).toBe(3)
  })

  it("stops start-up with one line naming the file, route, deployment and what is wrong", async () => {
    const file = routesFile(bedrockFile)
    expect(await errorWithFile({ UPSTREAMS_FILE: file, BEDROCK_KEY_ID: "AKIDEXAMPLE" })).toBe(
      `Invalid configuration: UPSTREAMS_FILE ${file}: routes.provider_b/eu[0] (bedrock-frankfurt): auth.aws.secretAccessKey: secret env BEDROCK_SECRET is not set`
    )
    expect(await errorWithFile({ UPSTREAMS_FILE: file, BEDROCK_KEY_ID: "AKIDEXAMPLE", BEDROCK_SECRET: "" })).toMatch(/secret env BEDROCK_SECRET is empty$/)
    const missing = path.join(os.tmpdir(), "ws-config-no-such-dir", "upstreams.yaml")
    expect(errorOf({ UPSTREAMS_FILE: missing })).toBe(`Invalid configuration: UPSTREAMS_FILE ${missing}: cannot be read (ENOENT)`)
    // An empty value (`UPSTREAMS_FILE=` in an env file) is no file.
    expect(Either.getOrThrow(read({ UPSTREAMS_FILE: "" })).routes.routes.size).toBe(0)
    expect(await errorWithFile({ UPSTREAMS_FILE: routesFile("routes:\n  provider_c/us: []") })).toMatch(/: routes\.provider_c\/us: unknown route \(the routes are provider_a\/eu, provider_a\/us, provider_b\/eu, provider_b\/us, provider_c\/eu\)$/)
    const keyFile = routesFile(bedrockFile.replace("{ env: BEDROCK_SECRET }", "{ file: ./no-such.key }"))
    expect(await errorWithFile({ UPSTREAMS_FILE: keyFile, BEDROCK_KEY_ID: "AKIDEXAMPLE" })).toMatch(
      /auth\.aws\.secretAccessKey: secret file \.\/no-such\.key cannot be read \(ENOENT\)$/
    )
  })

  it("reads UPSTREAM_MAX_ATTEMPTS from 1 to 10", () => {
    expect(Either.getOrThrow(read({ UPSTREAM_MAX_ATTEMPTS: "1" })).upstreamMaxAttempts).toBe(1)
    expect(Either.getOrThrow(read({ UPSTREAM_MAX_ATTEMPTS: "10" })).upstreamMaxAttempts).toBe(10)
    for (const bad of ["0", "11", "2.5"]) {
      expect(errorOf({ UPSTREAM_MAX_ATTEMPTS: bad }), bad).toMatch(/^Invalid configuration: UPSTREAM_MAX_ATTEMPTS: /)
    }
  })
})
