import { describe, expect, it } from "vitest"
import { boundedRetryHints, makeRedactor, redactBoth, relayedProblem } from "../../src/providers/untrusted"
import { retryHeaders } from "../../src/providers/rateLimitHeaders"

describe("upstream words and numbers as untrusted input", () => {
  const key = "sk-configured-upstream-key-1234"
  const redact = makeRedactor([key], ["upstream.internal:8443", "upstream.internal"])
  /** Every run of 8 characters of the key: none may be left in a redacted text. */
  const pieces = (secret: string) => Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8))
  const leaks = (text: string, secret = key) => pieces(secret).filter((piece) => text.includes(piece))

  it("replaces configured keys and hosts, URLs, bearer credentials, key-like tokens and addresses", () => {
    const text = redact(
      "Incorrect API key provided: Bearer sk-configured-upstream-key-1234 at https://upstream.internal:8443/v1 " +
        "(proxy lb-7.corp.example:8080, 10.1.2.3:443, [fd00::7]:443), other key sk-proj-abc123def456ghi789"
    )
    expect(text).not.toMatch(/configured-upstream|upstream\.internal|corp\.example|10\.1\.2\.3|fd00|abc123def456/)
    expect(text).toContain("Incorrect API key provided")
  })

  it("replaces host names without a port, internal and public, and localhost", () => {
    const text = redact(
      "connect ECONNREFUSED on ip-10-0-3-7.eu-west-1.compute.internal, via llm-proxy.prod.svc.cluster.local " +
        "and gateway.provider-a.com (localhost too)"
    )
    expect(text).not.toMatch(/compute\.internal|cluster\.local|provider-a\.com|localhost/)
    expect(text).toContain("connect ECONNREFUSED on [host]")
  })

  it("replaces the base64 of a configured key wherever it sits in the encoded text", () => {
    for (const prefix of ["", "a", "ab", "Bearer ", "user:"]) {
      const encoded = Buffer.from(`${prefix}${key}`).toString("base64")
      const text = redact(`the header was Basic-ish ${encoded} and url-safe ${Buffer.from(`${prefix}${key}`).toString("base64url")}`)
      // At most the few characters that mix the key's first or last bytes with its neighbours stay.
      expect(text, prefix).not.toContain(encoded.slice(4, -4))
      expect(text, prefix).toContain("[redacted]")
    }
  })

  it("replaces credentials after their names, and opaque tokens", () => {
    const text = redact('bad header "x-api-key": "abcdefgh1234" and api_key=zyxw9876; token AbCdEfGhIjKlMnOpQrStUvWxYz0123456789')
    expect(text).not.toMatch(/abcdefgh1234|zyxw9876|AbCdEfGh/)
  })

  it("keeps ordinary validation messages and field paths as they are", () => {
    for (const message of [
      "messages[0].content: expected a string, got an object",
      "tools[0].function.name: must match ^[a-zA-Z0-9_-]+$",
      "response_format.json_schema.name is required for model assistantmodel-sonnet-4-5-20250929",
      "max_tokens: 9000 > 8192, the model's output limit (version 1.2.3, e.g. lower it)",
      "request 3f2a1c9e-8b7d-4e6f-9a0b-1c2d3e4f5a6b failed at 12:30:45"
    ]) expect(redact(message)).toBe(message)
  })

  it("redacts before it cuts: a key across the 1,000th character leaks none of it", () => {
    for (const at of [990, 995, 999, 1_000, 1_001]) {
      const problem = relayedProblem({ status: 400, code: "c", message: `${"x".repeat(at)}${key} and more` }, redact)
      expect(leaks(problem.message), String(at)).toEqual([])
      expect(problem.message.length).toBeLessThanOrEqual(1_001)
    }
    expect(relayedProblem({ status: 400, code: "c", message: "y".repeat(5_000) }, redact).message.length).toBeLessThanOrEqual(1_001)
  })

  it("keeps a code and param only when they are short identifiers that hold no secret", () => {
    expect(relayedProblem({ status: 400, code: "<script>", message: "m", param: "messages[0].role" }, redact))
      .toEqual({ status: 400, code: "upstream_error", message: "m", param: "messages[0].role" })
    expect(relayedProblem({ status: 400, code: "invalid_api_key", message: "m", param: "tools[1].function.parameters" }, redact))
      .toEqual({ status: 400, code: "invalid_api_key", message: "m", param: "tools[1].function.parameters" })
    for (const secretLike of [key, "sk-proj-abc123def456ghi789", "upstream.internal", "proxy.corp", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"]) {
      const problem = relayedProblem({ status: 400, code: secretLike, message: "m", param: secretLike }, redact)
      expect(problem.code, secretLike).toBe("upstream_error")
      expect(problem.param, secretLike).toBeUndefined()
    }
    // Longer than a field path or a code: dropped, whatever it holds.
    expect(relayedProblem({ status: 400, code: "c".repeat(65), message: "m", param: "p".repeat(65) }, redact))
      .toEqual({ status: 400, code: "upstream_error", message: "m", param: undefined })
  })

  it("redacts a second key (a workspace's own) with the service's", () => {
    const own = "own-workspace-key-ABCDEFGHIJ0123"
    const both = redactBoth(redact, makeRedactor([own]))
    const text = both(`keys ${key} and ${own} and ${Buffer.from(own).toString("base64")}`)
    expect(leaks(text)).toEqual([])
    expect(leaks(text, own)).toEqual([])
  })

  it("bounds retry hints to 0–600 s and drops unreadable ones", () => {
    expect(boundedRetryHints("999999999", "-5", 0)).toEqual({ "retry-after": "600", "retry-after-ms": "0" })
    expect(boundedRetryHints("1.5", "1500.2", 0)).toEqual({ "retry-after": "2", "retry-after-ms": "1501" })
    expect(boundedRetryHints(new Date(60_000).toUTCString(), undefined, 0)).toEqual({ "retry-after": "60" })
    expect(boundedRetryHints("soon", "later", 0)).toEqual({})
  })

  it("gives retry-after from retry-after-ms when the upstream sent milliseconds alone (Azure)", () => {
    expect(boundedRetryHints(undefined, "1500", 0)).toEqual({ "retry-after": "2", "retry-after-ms": "1500" })
    expect(boundedRetryHints("soon", "4000", 0)).toEqual({ "retry-after": "4", "retry-after-ms": "4000" })
    expect(boundedRetryHints(undefined, "99999999", 0)).toEqual({ "retry-after": "600", "retry-after-ms": "600000" })
    // The upstream's own retry-after wins over the one derived.
    expect(boundedRetryHints("7", "1500", 0)).toEqual({ "retry-after": "7", "retry-after-ms": "1500" })
  })

  it("never tells a client of a workspace to wait more than 600 s (defect 6: retry-after 9999970)", () => {
    expect(retryHeaders(9_999_970_000)).toEqual({ "retry-after": "600", "retry-after-ms": "600000" })
    expect(retryHeaders(1_500)).toEqual({ "retry-after": "2", "retry-after-ms": "1500" })
  })
})
