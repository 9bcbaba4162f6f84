// SigV4 as Bedrock checks it: the signature recomputed with AWS's own signer over the received method, raw
// path, query, signed headers and body, with the simulator's credentials; any difference is a 403.
import { Hash } from "@smithy/hash-node"
import { SignatureV4 } from "@smithy/signature-v4"
import { Effect, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { type BedrockException, bedrockException } from "./errors"

export interface ReceivedRequest {
  readonly method: string
  /** Path and query exactly as received. */
  readonly url: string
  readonly header: (name: string) => string | undefined
  readonly body: string
}

export interface AwsKeys {
  readonly accessKeyId: string
  readonly secretAccessKey: Redacted.Redacted<string>
}

/** How far x-amz-date may be from the server's clock, as AWS allows. */
const maxSkewMs = 5 * 60 * 1000

const authorizationRegex =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9\-;]+),\s*Signature=([0-9a-f]{64})$/

const refused = (name: string, message: string) => bedrockException(name, 403, message)

const signatureMismatch = refused(
  "InvalidSignatureException",
  "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)

/** 20261128T042424Z → its instant, or undefined. */
const amzDate = (value: string): Date | undefined => {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value)
  if (match === null) return undefined
  const [, year, month, day, hour, minute, second] = match.map(Number)
  return new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 0, hour ?? 0, minute ?? 0, second ?? 0))
}

const queryOf = (search: URLSearchParams): Record<string, string | Array<string>> => {
  const query: Record<string, string | Array<string>> = {}
  for (const key of new Set(search.keys())) {
    const values = search.getAll(key)
    query[key] = values.length === 1 ? (values[0] ?? "") : values
  }
  return query
}

const sameHex = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/** Why the request's signature is refused, or undefined when it is the one the simulator's keys make. */
export const signatureRefusal = (request: ReceivedRequest, keys: AwsKeys, nowMs: number): Effect.Effect<BedrockException | undefined> =>
  Effect.gen(function* () {
    const authorization = request.header("authorization")
    if (authorization === undefined) return refused("MissingAuthenticationTokenException", "Missing Authentication Token")
    const parts = authorizationRegex.exec(authorization)
    if (parts === null) {
      return refused("IncompleteSignatureException", `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.`)
    }
    const [, accessKeyId = "", scopeDate = "", region = "", service = "", signedHeaders = "", signature = ""] = parts
    if (accessKeyId !== keys.accessKeyId) {
      return refused("UnrecognizedClientException", "The security token included in the request is invalid.")
    }
    if (service !== "bedrock") return refused("InvalidSignatureException", "Credential should be scoped to correct service: 'bedrock'.")
    const signingDate = amzDate(request.header("x-amz-date") ?? "")
    if (signingDate === undefined || !request.header("x-amz-date")?.startsWith(scopeDate)) return signatureMismatch
    if (Math.abs(nowMs - signingDate.getTime()) > maxSkewMs) {
      return refused("InvalidSignatureException", `Signature expired: ${request.header("x-amz-date")} is now earlier or later than the allowed skew.`)
    }
    const payloadHash = request.header("x-amz-content-sha256")
    if (payloadHash !== undefined && payloadHash !== createHash("sha256").update(request.body).digest("hex")) {
      return refused("InvalidSignatureException", "The provided 'x-amz-content-sha256' header does not match what was computed.")
    }
    const headers: Record<string, string> = {}
    const names = signedHeaders.split(";")
    if (!names.includes("host")) return signatureMismatch
    for (const name of names) {
      const value = request.header(name)
      if (value === undefined) return signatureMismatch
      headers[name] = value
    }
    const url = new URL(request.url, "http://simulator.invalid")
    const signer = new SignatureV4({
      service,
      region,
      credentials: { accessKeyId, secretAccessKey: Redacted.value(keys.secretAccessKey) },
      sha256: Hash.bind(null, "sha256"),
      // Only what the client signed: a payload hash it did not send is not added.
      applyChecksum: false
    })
    // The raw path, not URL's normalized one: the signature covers the path as the client sent it.
    const rawPath = request.url.split("?")[0] ?? "/"
    const signed = yield* Effect.promise(() =>
      signer.sign(
        { method: request.method, protocol: "http:", hostname: headers.host ?? "", path: rawPath, query: queryOf(url.searchParams), headers, body: request.body },
        { signingDate }
      )
    )
    const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization ?? ""))?.[1] ?? ""
    return sameHex(expected, signature) ? undefined : signatureMismatch
  })
