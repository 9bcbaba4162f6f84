/**
 * Stable user pseudonyms for exports of workspaces with `anonymizeUsers`.
 *
 * tag = first 16 hex digits (64 bits) of HMAC-SHA256(server secret, `<workspaceId>:<userId>`).
 * The same user gets the same pseudonym in every export of the same workspace, so rows can still be
 * joined across files; the same user id in another workspace, or under another secret, gets another
 * one. Without the secret a pseudonym cannot be linked back to an id (no dictionary attack on ids).
 * All three identity columns derive from the user id, so an email or name change keeps the pseudonym:
 *   id    → `user_<tag>`
 *   email → `user_<tag>@anonymized.invalid`   (`.invalid` is reserved: never a deliverable address)
 *   name  → `User <tag>`
 */
import { createHmac } from "node:crypto"
import type { CsvRow } from "./csv"
import type { ExportLayout, UserIdentity } from "./exportLayouts"

export type UserPseudonyms = { readonly [K in UserIdentity]: string }

export const PSEUDONYM_TAG_HEX_DIGITS = 16

export const pseudonymTag = (secret: string | Uint8Array, workspaceId: string, userId: string): string =>
  createHmac("sha256", secret)
    .update(`${workspaceId}:${userId}`, "utf8")
    .digest("hex")
    .slice(0, PSEUDONYM_TAG_HEX_DIGITS)

export const userPseudonyms = (secret: string | Uint8Array, workspaceId: string, userId: string): UserPseudonyms => {
  const tag = pseudonymTag(secret, workspaceId, userId)
  return { id: `user_${tag}`, email: `user_${tag}@anonymized.invalid`, name: `User ${tag}` }
}

/**
 * A pseudonymiser for one export: remembers the pseudonyms it computed, since a user appears on
 * every day of the range. The cache lives as long as the returned function (one export).
 */
export const makeUserPseudonymizer = (
  secret: string | Uint8Array,
  workspaceId: string
): ((userId: string) => UserPseudonyms) => {
  const known = new Map<string, UserPseudonyms>()
  return (userId) => {
    const cached = known.get(userId)
    if (cached !== undefined) return cached
    const pseudonyms = userPseudonyms(secret, workspaceId, userId)
    known.set(userId, pseudonyms)
    return pseudonyms
  }
}

/**
 * How an export treats user-identifying columns:
 * - `blank` when leaderboards are off (the spec: complete user data needs leaderboards), even if
 *   `anonymizeUsers` is also set;
 * - `pseudonymise` when `anonymizeUsers` is on;
 * - `clear` otherwise.
 */
export type UserPrivacyMode = "clear" | "blank" | "pseudonymise"

export const userPrivacyMode = (settings: {
  readonly anonymizeUsers: boolean
  readonly leaderboardsEnabled: boolean
}): UserPrivacyMode => (!settings.leaderboardsEnabled ? "blank" : settings.anonymizeUsers ? "pseudonymise" : "clear")

/**
 * A row transformer applying the privacy mode to the layout's user-identifying columns. The column
 * holding the user id (`identifies: "id"`) keys the pseudonyms; an empty email or name stays empty.
 * Layouts without such columns, and the `clear` mode, get the identity function.
 */
export const protectUserColumns = (
  layout: ExportLayout,
  mode: UserPrivacyMode,
  pseudonymize: (userId: string) => UserPseudonyms
): ((row: CsvRow) => CsvRow) => {
  const identifying = layout.columns.flatMap((column) =>
    column.identifies === undefined ? [] : [{ name: column.name, identifies: column.identifies }]
  )
  const idColumn = identifying.find((column) => column.identifies === "id")
  if (mode === "clear" || identifying.length === 0) return (row) => row
  if (mode === "blank") {
    return (row) => {
      const blanked: Record<string, unknown> = { ...row }
      for (const column of identifying) blanked[column.name] = null
      return blanked
    }
  }
  return (row) => {
    const userId = idColumn === undefined ? undefined : row[idColumn.name]
    const pseudonyms = typeof userId === "string" && userId.length > 0 ? pseudonymize(userId) : undefined
    const replaced: Record<string, unknown> = { ...row }
    for (const column of identifying) {
      const value = row[column.name]
      const present = value !== null && value !== undefined && value !== ""
      // Without a user id nothing can be derived: blank rather than leak.
      replaced[column.name] = present && pseudonyms !== undefined ? pseudonyms[column.identifies] : null
    }
    return replaced
  }
}
