import { Schema } from "effect"
import * as crypto from "node:crypto"

export const Scope = Schema.Literal("USAGE_EXPORT_API", "COMPLETION_API")
export type Scope = typeof Scope.Type

/** Every key starts with this, so leaked keys are easy to recognise and scan for. */
export const keyPrefix = "wsk_"

/** 32 random bytes (256 bits) in base64url: 43 characters after the prefix. */
const secretPattern = /^wsk_[A-Za-z0-9_-]{43}$/

export const generateApiKey = (): string => `${keyPrefix}${crypto.randomBytes(32).toString("base64url")}`

/** A key we could have issued; anything else is refused before any lookup. */
export const isWellFormedApiKey = (candidate: string): boolean => secretPattern.test(candidate)

/**
 * Keys carry 256 bits of entropy, so one round of SHA-256 is enough to make the stored hash useless. The one-shot
 * `crypto.hash` (no Hash object to make and finalise): this runs for every authenticated request.
 */
export const hashApiKey = (key: string): Buffer => crypto.hash("sha256", key, "buffer")

/** What listings show of a key: its prefix and first characters. */
export const displayPrefix = (key: string): string => `${key.slice(0, keyPrefix.length + 6)}…`

/** Constant-time equality of two hashes (never short-circuits on the first differing byte). */
export const sameHash = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && crypto.timingSafeEqual(a, b)
