import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { Either } from "effect"

/**
 * Customer-supplied provider keys at rest: AES-256-GCM under CREDENTIALS_KEY. A sealed credential names
 * the key that sealed it (its id, a hash that reveals nothing of the key), so CREDENTIALS_KEY can be
 * rotated: while the previous key is still given, credentials sealed under it are opened with it and
 * re-sealed under the new one. The workspace and provider are bound in as associated data, so a
 * sealed key copied to another workspace's row does not open there.
 */
export interface CredentialsKey {
  /** 12 hex characters identifying the key, stored beside each credential it sealed. */
  readonly id: string
  readonly key: Uint8Array
}

const keyBytes = 32
const ivBytes = 12
const tagBytes = 16
const version = "v1"

/** The key of CREDENTIALS_KEY: 32 bytes given as base64 (standard or URL-safe) or as 64 hex characters. */
export const parseCredentialsKey = (text: string): Either.Either<CredentialsKey, string> => {
  const trimmed = text.trim()
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
    ? Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64")
    : undefined
  if (bytes?.length !== keyBytes) {
    return Either.left("Expected 32 bytes as base64 (44 characters) or hex (64 characters); generate one with `openssl rand -base64 32`")
  }
  return Either.right({ id: credentialsKeyId(bytes), key: bytes })
}

export const credentialsKeyId = (key: Uint8Array): string =>
  createHash("sha256").update("workspace-api credentials key id\n").update(key).digest("hex").slice(0, 12)

/** What a sealed credential is bound to: it opens only for the same workspace and provider. */
export const credentialContext = (workspaceId: string, provider: string): string => `${workspaceId}\n${provider}`

/** `v1.<key id>.<iv>.<ciphertext and tag>`, base64url parts. */
export const sealCredential = (key: CredentialsKey, plaintext: string, context: string): string => {
  const iv = randomBytes(ivBytes)
  const cipher = createCipheriv("aes-256-gcm", key.key, iv, { authTagLength: tagBytes })
  cipher.setAAD(Buffer.from(context, "utf8"))
  const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()])
  return [version, key.id, iv.toString("base64url"), sealed.toString("base64url")].join(".")
}

/** The id of the key that sealed a credential, or undefined when the text is not a sealed credential. */
export const sealedKeyId = (sealed: string): string | undefined => {
  const parts = sealed.split(".")
  return parts.length === 4 && parts[0] === version ? parts[1] : undefined
}

export type OpenFailure =
  /** Sealed under a key that is neither CREDENTIALS_KEY nor CREDENTIALS_KEY_PREVIOUS. */
  | "unknown_key"
  /** Not a sealed credential, changed since it was sealed, or bound to another workspace or provider. */
  | "unreadable"

/** Opens a sealed credential with whichever of the given keys sealed it. */
export const openCredential = (
  keys: ReadonlyArray<CredentialsKey>,
  sealed: string,
  context: string
): Either.Either<string, OpenFailure> => {
  const [tag, keyId, ivText, bodyText] = sealed.split(".")
  if (tag !== version || keyId === undefined || ivText === undefined || bodyText === undefined) return Either.left("unreadable")
  const key = keys.find((candidate) => candidate.id === keyId)
  if (key === undefined) return Either.left("unknown_key")
  const iv = Buffer.from(ivText, "base64url")
  const body = Buffer.from(bodyText, "base64url")
  if (iv.length !== ivBytes || body.length < tagBytes) return Either.left("unreadable")
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.key, iv, { authTagLength: tagBytes })
    decipher.setAAD(Buffer.from(context, "utf8"))
    decipher.setAuthTag(body.subarray(body.length - tagBytes))
    return Either.right(Buffer.concat([decipher.update(body.subarray(0, body.length - tagBytes)), decipher.final()]).toString("utf8"))
  } catch {
    // GCM's authentication failed: node:crypto reports it by throwing, which ends here as a value.
    return Either.left("unreadable")
  }
}

/** The last four characters of a key: all that is ever shown of it again. */
export const lastFour = (apiKey: string): string => apiKey.slice(-4)
