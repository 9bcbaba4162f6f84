// The simulated cloud's OAuth2 authority: one service account whose key pair is made at first use, the JWT-bearer
// exchange of its signed assertions for access tokens, and the check of the tokens it issued.
import { Clock, Context, Effect, Either, HashMap, Layer, Ref, Schema } from "effect"
import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, verify } from "node:crypto"

/** The scope an assertion must ask for. */
export const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/** How long an issued token lives, as the real authority's do. */
const tokenSeconds = 3600

/** Clock skew tolerated on an assertion's iat. */
const skewSeconds = 300

/** A service-account key file, as the cloud's console downloads it (snake_case, its wire names). */
export interface ServiceAccountFile {
  readonly type: "service_account"
  readonly project_id: string
  readonly private_key_id: string
  readonly private_key: string
  readonly client_email: string
  readonly client_id: string
  readonly token_uri: string
}

export interface TokenAnswer {
  readonly access_token: string
  readonly expires_in: number
  readonly token_type: "Bearer"
}

/** The OAuth2 error answer of the token endpoint (400). */
export class OAuthRefusal extends Schema.TaggedError<OAuthRefusal>()("OAuthRefusal", {
  error: Schema.String,
  error_description: Schema.String
}) {}

const JwtHeader = Schema.parseJson(Schema.Struct({ alg: Schema.String, typ: Schema.optional(Schema.String), kid: Schema.optional(Schema.String) }))
const JwtClaims = Schema.parseJson(
  Schema.Struct({ iss: Schema.String, aud: Schema.String, scope: Schema.String, iat: Schema.Number, exp: Schema.Number })
)

const refuse = (description: string, error = "invalid_grant") => new OAuthRefusal({ error, error_description: description })

const fromBase64Url = (part: string) => Buffer.from(part, "base64url").toString("utf8")

export interface VertexAuthorityShape {
  /** The service account's key file whose token_uri is this simulator's token endpoint (`{baseUrl}/token`). */
  readonly serviceAccountFile: (baseUrl: string) => Effect.Effect<ServiceAccountFile>
  /** Answers a form-encoded token request that arrived at tokenUrl (what the assertion's aud must be). */
  readonly exchange: (form: string, tokenUrl: string) => Effect.Effect<TokenAnswer, OAuthRefusal>
  /** Whether the token is one this authority issued and that has not expired. */
  readonly accepts: (token: string) => Effect.Effect<boolean>
  /** Tokens issued since start (tests count the gateway's token requests with it). */
  readonly tokensIssued: Effect.Effect<number>
}

/** Verifies an RS256 assertion of the account and returns its claims, or why it is refused. */
const verifyAssertion = (
  assertion: string,
  account: { readonly clientEmail: string; readonly publicKey: KeyObject },
  tokenUrl: string,
  nowSeconds: number
): Either.Either<void, OAuthRefusal> =>
  Either.gen(function* () {
    const [header = "", claims = "", signature = "", ...extra] = assertion.split(".")
    if (extra.length > 0 || signature === "") return yield* Either.left(refuse("Invalid JWT: malformed assertion."))
    const head = yield* Schema.decodeUnknownEither(JwtHeader)(fromBase64Url(header)).pipe(
      Either.mapLeft(() => refuse("Invalid JWT: unreadable header."))
    )
    if (head.alg !== "RS256") return yield* Either.left(refuse(`Invalid JWT: algorithm ${head.alg} is not RS256.`))
    const body = yield* Schema.decodeUnknownEither(JwtClaims)(fromBase64Url(claims)).pipe(
      Either.mapLeft(() => refuse("Invalid JWT: the claims need iss, aud, scope, iat and exp."))
    )
    if (body.iss !== account.clientEmail) return yield* Either.left(refuse("Invalid JWT: no such service account.", "invalid_client"))
    const signed = verify("RSA-SHA256", Buffer.from(`${header}.${claims}`), account.publicKey, Buffer.from(signature, "base64url"))
    if (!signed) return yield* Either.left(refuse("Invalid JWT Signature."))
    if (body.aud !== tokenUrl) return yield* Either.left(refuse(`Invalid JWT: aud must be ${tokenUrl}.`))
    if (!body.scope.split(" ").includes(cloudPlatformScope)) return yield* Either.left(refuse("Invalid OAuth scope or ID token audience provided.", "invalid_scope"))
    if (body.exp <= body.iat || body.exp - body.iat > tokenSeconds || body.iat > nowSeconds + skewSeconds || body.exp < nowSeconds) {
      return yield* Either.left(
        refuse("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
      )
    }
  })

export class VertexAuthority extends Context.Tag("simulator/VertexAuthority")<VertexAuthority, VertexAuthorityShape>() {
  /** A fresh key pair and an empty token store each time it is built (once per simulator start). */
  static readonly layer: Layer.Layer<VertexAuthority> = Layer.effect(
    VertexAuthority,
    Effect.gen(function* () {
      // Made at first use, not at start: most simulator runs never see this cloud, and the key takes a while.
      const account = yield* Effect.cached(
        Effect.sync(() => {
          const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
          return {
            clientEmail: "gateway@simulated-project.iam.gserviceaccount.com",
            privatePem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
            publicKey: createPublicKey(privateKey),
            keyId: randomBytes(20).toString("hex")
          }
        })
      )
      // Token → expiry (ms); expired ones are dropped whenever one is issued.
      const tokens = yield* Ref.make(HashMap.empty<string, number>())
      const issued = yield* Ref.make(0)
      return VertexAuthority.of({
        serviceAccountFile: (baseUrl) =>
          Effect.map(account, (known) => ({
            type: "service_account" as const,
            project_id: "simulated-project",
            private_key_id: known.keyId,
            private_key: known.privatePem,
            client_email: known.clientEmail,
            client_id: "100000000000000000001",
            token_uri: `${baseUrl.replace(/\/+$/, "")}/token`
          })),
        exchange: (form, tokenUrl) =>
          Effect.gen(function* () {
            const fields = new URLSearchParams(form)
            const grant = fields.get("grant_type")
            if (grant !== jwtBearerGrant) return yield* refuse(`Invalid grant_type: ${grant ?? ""}`, "unsupported_grant_type")
            const now = yield* Clock.currentTimeMillis
            yield* verifyAssertion(fields.get("assertion") ?? "", yield* account, tokenUrl, Math.floor(now / 1000))
            const token = `ya29.${randomBytes(48).toString("base64url")}`
            yield* Ref.update(tokens, (known) => HashMap.set(HashMap.filter(known, (expiry) => expiry > now), token, now + tokenSeconds * 1000))
            yield* Ref.update(issued, (count) => count + 1)
            return { access_token: token, expires_in: tokenSeconds, token_type: "Bearer" as const }
          }),
        accepts: (token) =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const expiry = HashMap.get(yield* Ref.get(tokens), token)
            return expiry._tag === "Some" && expiry.value > now
          }),
        tokensIssued: Ref.get(issued)
      })
    })
  )
}
