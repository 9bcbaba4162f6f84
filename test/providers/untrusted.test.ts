import { describe, expect, it } from "vitest"
import { boundedRetryHints, makeScrubber, scrubProblem } from "../../src/providers/untrusted"
import { retryHeaders } from "../../src/providers/rateLimitHeaders"

describe("upstream words and numbers as untrusted input", () => {
  const scrub = makeScrubber(["sk-configured-upstream-key-1234"], ["upstream.internal:8443", "upstream.internal"])

  it("replaces configured keys and hosts, URLs, bearer credentials, key-like tokens and addresses", () => {
    const text = scrub(
      "Incorrect API key provided: Bearer sk-configured-upstream-key-1234 at https://upstream.internal:8443/v1 " +
        "(proxy lb-7.corp.example:8080, 10.1.2.3:443), other key sk-proj-abc123def456ghi789"
    )
    expect(text).not.toMatch(/configured-upstream|upstream\.internal|corp\.example|10\.1\.2\.3|abc123def456/)
    expect(text).toContain("Incorrect API key provided")
  })

  it("keeps ordinary validation messages as they are, and cuts long ones", () => {
    expect(scrub("messages[0].content: expected a string, got an object")).toBe("messages[0].content: expected a string, got an object")
    expect(scrub("x".repeat(5_000)).length).toBeLessThanOrEqual(1_001)
  })

  it("keeps a code and param only when they are plain identifiers", () => {
    const problem = scrubProblem({ status: 400, code: "<script>", message: "m", param: "messages[0].role" }, scrub)
    expect(problem).toEqual({ status: 400, code: "upstream_error", message: "m", param: "messages[0].role" })
  })

  it("bounds retry hints to 0–600 s and drops unreadable ones", () => {
    expect(boundedRetryHints("999999999", "-5", 0)).toEqual({ "retry-after": "600", "retry-after-ms": "0" })
    expect(boundedRetryHints("1.5", "1500.2", 0)).toEqual({ "retry-after": "2", "retry-after-ms": "1501" })
    expect(boundedRetryHints(new Date(60_000).toUTCString(), undefined, 0)).toEqual({ "retry-after": "60" })
    expect(boundedRetryHints("soon", "later", 0)).toEqual({})
  })

  it("never tells a client of a workspace to wait more than 600 s (defect 6: retry-after 9999970)", () => {
    expect(retryHeaders(9_999_970_000)).toEqual({ "retry-after": "600", "retry-after-ms": "600000" })
    expect(retryHeaders(1_500)).toEqual({ "retry-after": "2", "retry-after-ms": "1500" })
  })
})
