/**
 * Signed, expiring download links of local export files: `GET /downloads/<filePath>?expires=<unix
 * seconds>&signature=<hex>`, where
 *
 *   signature = hex(HMAC-SHA256(link key, `${filePath}\n${expires}`))
 *
 * The file path and the expiry are both under the signature, so changing either (or the signature)
 * makes the link invalid; a valid link past its expiry is refused too. Only paths of the export file
 * shape are ever signed or served (`isExportFilePath`): no `..`, no other folder, no hidden file.
 */
import { Either } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { EXPORT_KINDS } from "./exportLayouts"

export type DownloadRefusal =
  /** The path is not an export file path: nothing could ever be served there. */
  | "bad_path"
  /** Missing or malformed `expires` / `signature`, or a signature that does not match. */
  | "bad_signature"
  /** A genuine link whose time is up. */
  | "expired"

export interface SignedLink {
  readonly filePath: string
  /** Unix seconds after which the link is refused. */
  readonly expires: number
  readonly signature: string
}

const kinds = EXPORT_KINDS.join("|")
// <kind>-usage/<workspace uuid>/<kind>-usage-<yyyyMMdd>-<yyyyMMdd>-<suffix>.csv, same kind twice.
const EXPORT_FILE_PATH = new RegExp(
  `^(${kinds})-usage/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/\\1-usage-\\d{8}-\\d{8}-[A-Za-z0-9_-]{1,64}\\.csv$`
)
const SIGNATURE = /^[0-9a-f]{64}$/
const EXPIRES = /^\d{1,12}$/

/** Whether a path has the shape of an export file (and hence cannot leave the export folder). */
export const isExportFilePath = (filePath: string): boolean => EXPORT_FILE_PATH.test(filePath)

const mac = (key: Uint8Array, filePath: string, expires: number): Buffer =>
  createHmac("sha256", key).update(`${filePath}\n${expires}`, "utf8").digest()

export const signDownload = (key: Uint8Array, filePath: string, expires: number): SignedLink => ({
  filePath,
  expires,
  signature: mac(key, filePath, expires).toString("hex")
})

/** `<base>/downloads/<filePath>?expires=…&signature=…`; base is PUBLIC_URL followed by BASE_PATH. */
export const downloadUrl = (base: string, link: SignedLink): string =>
  `${base.replace(/\/+$/, "")}/downloads/${link.filePath}?expires=${link.expires}&signature=${link.signature}`

/**
 * Checks a presented link at `nowSeconds`. The signature is checked before the expiry, so a
 * changed expiry is a bad signature, not an extension; the comparison takes constant time.
 */
export const verifyDownload = (
  key: Uint8Array,
  presented: { readonly filePath: string; readonly expires: string | undefined; readonly signature: string | undefined },
  nowSeconds: number
): Either.Either<SignedLink, DownloadRefusal> => {
  const { expires, filePath, signature } = presented
  if (!isExportFilePath(filePath)) return Either.left("bad_path")
  if (expires === undefined || signature === undefined || !EXPIRES.test(expires) || !SIGNATURE.test(signature)) {
    return Either.left("bad_signature")
  }
  const expiresAt = Number(expires)
  const expected = mac(key, filePath, expiresAt)
  if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) return Either.left("bad_signature")
  if (nowSeconds >= expiresAt) return Either.left("expired")
  return Either.right({ filePath, expires: expiresAt, signature })
}
