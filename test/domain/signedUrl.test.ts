import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { createHmac } from "node:crypto"
import { downloadUrl, isExportFilePath, signDownload, verifyDownload } from "../../src/domain/signedUrl"

const key = Buffer.from("0123456789abcdef0123456789abcdef")
const filePath = "users-usage/6f1c2b3a-0000-4000-8000-000000000001/users-usage-20260105-20260112-v1-k3j9x2.csv"
const now = 1_800_000_000

describe("signed download links", () => {
  it("sign the path and expiry with HMAC-SHA256", () => {
    const link = signDownload(key, filePath, now + 60)
    expect(link.signature).toBe(createHmac("sha256", key).update(`${filePath}\n${now + 60}`).digest("hex"))
    expect(downloadUrl("https://exports.example/api/public/", link)).toBe(
      `https://exports.example/api/public/downloads/${filePath}?expires=${now + 60}&signature=${link.signature}`
    )
  })

  it("verify a genuine link before its expiry", () => {
    const link = signDownload(key, filePath, now + 60)
    const verdict = verifyDownload(key, { filePath, expires: String(link.expires), signature: link.signature }, now)
    expect(Either.isRight(verdict)).toBe(true)
  })

  it("refuse a changed path, expiry, signature or key", () => {
    const link = signDownload(key, filePath, now + 60)
    const presented = { filePath, expires: String(link.expires), signature: link.signature }
    const otherPath = filePath.replace("k3j9x2", "k3j9x3")
    expect(verifyDownload(key, { ...presented, filePath: otherPath }, now)).toEqual(Either.left("bad_signature"))
    expect(verifyDownload(key, { ...presented, expires: String(now + 61) }, now)).toEqual(Either.left("bad_signature"))
    expect(verifyDownload(key, { ...presented, signature: "0".repeat(64) }, now)).toEqual(Either.left("bad_signature"))
    expect(verifyDownload(key, { ...presented, signature: link.signature.toUpperCase() }, now)).toEqual(Either.left("bad_signature"))
    expect(verifyDownload(Buffer.from("another key"), presented, now)).toEqual(Either.left("bad_signature"))
    expect(verifyDownload(key, { ...presented, expires: undefined }, now)).toEqual(Either.left("bad_signature"))
    expect(verifyDownload(key, { ...presented, signature: undefined }, now)).toEqual(Either.left("bad_signature"))
    expect(verifyDownload(key, { ...presented, expires: "-1" }, now)).toEqual(Either.left("bad_signature"))
  })

  it("refuse a genuine link at and after its expiry", () => {
    const link = signDownload(key, filePath, now)
    const presented = { filePath, expires: String(link.expires), signature: link.signature }
    expect(verifyDownload(key, presented, now - 1)._tag).toBe("Right")
    expect(verifyDownload(key, presented, now)).toEqual(Either.left("expired"))
    expect(verifyDownload(key, presented, now + 3600)).toEqual(Either.left("expired"))
  })

  it("accept only export file paths, so no link can leave the export folder", () => {
    expect(isExportFilePath(filePath)).toBe(true)
    for (const kind of ["assistants", "workflows", "projects", "models"]) {
      expect(isExportFilePath(filePath.replaceAll("users", kind))).toBe(true)
    }
    const refused = [
      "../secrets.json",
      `users-usage/6f1c2b3a-0000-4000-8000-000000000001/../../secrets.json`,
      `users-usage/6f1c2b3a-0000-4000-8000-000000000001/..%2Fx.csv`,
      filePath.replace("users-usage/", "models-usage/"),
      `/${filePath}`,
      `${filePath}/`,
      filePath.replace(".csv", ".CSV"),
      filePath.replace("6f1c2b3a", "6F1C2B3A"),
      filePath.replace("k3j9x2", "k3j9x2/../x"),
      `.partial/${filePath}`,
      filePath.replace("users-usage/", "users-usage//")
    ]
    for (const path of refused) {
      expect(isExportFilePath(path), path).toBe(false)
      const link = signDownload(key, path, now + 60)
      expect(verifyDownload(key, { filePath: path, expires: String(link.expires), signature: link.signature }, now)).toEqual(
        Either.left("bad_path")
      )
    }
  })
})
