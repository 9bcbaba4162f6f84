import { createHmac, randomBytes } from "node:crypto"

/**
 * Signing per the Standard Webhooks specification: the secret is `whsec_` and the base64 of its bytes; a
 * delivery's `webhook-signature` is `v1,` and the base64 HMAC-SHA256, under those bytes, of
 * `{webhook-id}.{webhook-timestamp}.{body}`.
 */

const secretPrefix = "whsec_"

/** A new signing secret: 32 random bytes (the specification asks for 24 to 64). */
export const generateWebhookSecret = (): string => `${secretPrefix}${randomBytes(32).toString("base64")}`

const secretBytes = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, "base64")

/** The `webhook-signature` header of a delivery; `timestamp` in whole seconds since the epoch. */
export const webhookSignature = (secret: string, id: string, timestamp: number, body: string): string =>
  `v1,${createHmac("sha256", secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")}`
