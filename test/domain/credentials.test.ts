import { describe, expect, it } from "vitest"
import { Either } from "effect"
import {
  credentialContext,
  type CredentialsKey,
  lastFour,
  openCredential,
  parseCredentialsKey,
  sealCredential,
  sealedKeyId
} from "../../src/domain/credentials"

const keyOf = (text: string): CredentialsKey => Either.getOrThrow(parseCredentialsKey(text))
const current = keyOf("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
const previous = keyOf(Buffer.alloc(32, 7).toString("base64"))
const context = credentialContext("6f1c2b3a-0000-4000-8000-000000000001", "provider_a")

describe("CREDENTIALS_KEY", () => {
  it("accepts 32 bytes as hex, base64 and base64url, with the same id for the same bytes", () => {
    const bytes = Buffer.alloc(32, 200)
    const ids = [bytes.toString("hex"), bytes.toString("base64"), bytes.toString("base64url")].map((text) => keyOf(text).id)
    expect(new Set(ids).size).toBe(1)
    expect(ids[0]).toMatch(/^[0-9a-f]{12}$/)
    expect(current.id).not.toBe(previous.id)
  })

  it("refuses other lengths and alphabets with a message saying what is expected", () => {
    for (const bad of ["", "short", Buffer.alloc(16).toString("base64"), Buffer.alloc(33).toString("hex"), "z".repeat(64)]) {
      const parsed = parseCredentialsKey(bad)
      expect(Either.isLeft(parsed)).toBe(true)
      if (Either.isLeft(parsed)) expect(parsed.left).toContain("32 bytes")
    }
  })
})

describe("sealed credentials", () => {
  it("open with the key that sealed them, and never contain the plaintext", () => {
    const sealed = sealCredential(current, "sk-workspace-secret-1234", context)
    expect(sealed).not.toContain("sk-workspace")
    expect(sealedKeyId(sealed)).toBe(current.id)
    expect(openCredential([previous, current], sealed, context)).toEqual(Either.right("sk-workspace-secret-1234"))
  })

  it("seal the same key differently each time (a fresh IV)", () => {
    expect(sealCredential(current, "same", context)).not.toBe(sealCredential(current, "same", context))
  })

  it("do not open under another key, another workspace or provider, or once changed", () => {
    const sealed = sealCredential(previous, "sk-workspace-secret-1234", context)
    expect(openCredential([current], sealed, context)).toEqual(Either.left("unknown_key"))
    expect(openCredential([previous], sealed, credentialContext("6f1c2b3a-0000-4000-8000-000000000002", "provider_a")))
      .toEqual(Either.left("unreadable"))
    expect(openCredential([previous], sealed, credentialContext("6f1c2b3a-0000-4000-8000-000000000001", "provider_b")))
      .toEqual(Either.left("unreadable"))
    const parts = sealed.split(".")
    const body = Buffer.from(parts[3]!, "base64url")
    body[0] = body[0]! ^ 1
    expect(openCredential([previous], [...parts.slice(0, 3), body.toString("base64url")].join("."), context)).toEqual(Either.left("unreadable"))
    expect(openCredential([previous], "not sealed", context)).toEqual(Either.left("unreadable"))
  })

  it("shows only the last four characters", () => {
    expect(lastFour("sk-workspace-secret-1234")).toBe("1234")
  })
})
