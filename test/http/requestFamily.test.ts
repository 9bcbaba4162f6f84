import { describe, expect, it } from "vitest"
import { requestFamily } from "../../src/http/requestFamily"

describe("the family label of a counted request", () => {
  it("names forwarded endpoints by their rate-limit family, the rest by area, never by an id or region", () => {
    expect(requestFamily("/provider_a/eu/v1/chat/completions")).toBe("chat_completions")
    expect(requestFamily("/provider_a/us/v1/embeddings")).toBe("embeddings")
    expect(requestFamily("/provider_b/eu/v1/messages")).toBe("messages")
    expect(requestFamily("/provider_b/eu/v1/messages/count_tokens")).toBe("messages")
    expect(requestFamily("/provider_c/eu/v1/fim/completions")).toBe("fim")
    expect(requestFamily("/provider_a/eu/v1/responses")).toBe("responses")
    expect(requestFamily("/provider_a/eu/v1/models/chatgen-4o")).toBe("models")
    expect(requestFamily("/export/users")).toBe("usage_export")
    expect(requestFamily("/downloads/exports/abc/file.csv")).toBe("downloads")
    expect(requestFamily("/admin/workspaces/123/api-keys")).toBe("admin")
    expect(requestFamily("/console/api/session")).toBe("console")
    expect(requestFamily("/readyz")).toBe("operations")
    expect(requestFamily("/metrics")).toBe("operations")
    expect(requestFamily("/anything/else")).toBe("other")
    expect(requestFamily("/provider_a/eu/v2/unknown")).toBe("other")
  })
})
