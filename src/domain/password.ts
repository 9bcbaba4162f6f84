import { Effect, Schema } from "effect"
import * as crypto from "node:crypto"
import { maximumPasswordLength, minimumPasswordLength, newPasswordProblem } from "./passwordRule"

export { maximumPasswordLength, minimumPasswordLength, newPasswordProblem } from "./passwordRule"

/** A password being chosen (invitation, change, reset), checked by the rule above; `field` names it in errors. */
export const NewPassword = (field: string) =>
  Schema.String.pipe(Schema.filter((password) => newPasswordProblem(password, field) ?? true)).annotations({
    description: `At least ${minimumPasswordLength} characters, not only white space.`
  })

/** A password being checked (sign-in, the current one): any text up to the maximum, never the rule. */
export const GivenPassword = Schema.String.pipe(Schema.maxLength(maximumPasswordLength))

/**
 * scrypt parameters: N = 2^15, r = 8, p = 1 (32 MiB, tens of milliseconds a hash). They are stored
 * with each hash, so they can be raised later without invalidating older passwords.
 */
const current = { N: 2 ** 15, r: 8, p: 1, keyLength: 32 } as const

const derive = (password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number) =>
  Effect.async<Buffer, Error>((resume) => {
    crypto.scrypt(password.normalize("NFC"), salt, keyLength, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      resume(error ? Effect.fail(error) : Effect.succeed(key)))
  })

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.suspend(() => {
    const salt = crypto.randomBytes(16)
    return derive(password, salt, current.N, current.r, current.p, current.keyLength).pipe(
      Effect.map((key) =>
        `scrypt$${current.N}$${current.r}$${current.p}$${salt.toString("base64url")}$${key.toString("base64url")}`
      ),
      Effect.orDie
    )
  })

/** A stored hash of a password nobody has: verifying against it costs what a real check costs. */
export const decoyHash = "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

/** Whether the password matches the stored hash; compared in constant time. A malformed hash never matches. */
export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> => {
  const parts = stored.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return Effect.succeed(false)
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  const expected = Buffer.from(parts[5]!, "base64url")
  if (![N, r, p].every(Number.isInteger) || expected.length < 16) return Effect.succeed(false)
  return derive(password, Buffer.from(parts[4]!, "base64url"), N, r, p, expected.length).pipe(
    Effect.map((key) => crypto.timingSafeEqual(key, expected)),
    Effect.orElseSucceed(() => false)
  )
}

/** A 256-bit random token (invitations, sessions): only its SHA-256 hash is stored. */
export const generateToken = (): string => crypto.randomBytes(32).toString("base64url")
export const hashToken = (token: string): Buffer => crypto.createHash("sha256").update(token, "utf8").digest()
/** Tokens we could have issued; anything else is refused before any lookup. */
export const isWellFormedToken = (token: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(token)
