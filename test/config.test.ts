import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { appConfig, type AppConfigShape, describeConfigError } from "../src/config"
import { tempDir } from "./support/tempDirs"

/** The settings read from exactly this environment, or the one line a bad one stops start-up with. */
const read = (env: Record<string, string>): Either.Either<AppConfigShape, string> =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))).pipe(
      Effect.map(Either.mapLeft(describeConfigError))
    )
  )

const errorOf = (env: Record<string, string>): string =>
  Either.match(read(env), { onLeft: (line) => line, onRight: () => "accepted" })

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
