import type { UsageExportResult } from "../api/types"

export type ExportData = UsageExportResult["data"]

export interface RecentExport extends ExportData {
  readonly ranAt: string
  readonly expiresAt: number | null
}

const storageKey = (workspaceId: string): string => `console.recentExports.${workspaceId}`

/** When a download link stops working: local links carry `expires` (seconds), S3 ones X-Amz-Date + X-Amz-Expires. */
export const linkExpiry = (downloadUrl: string): number | null => {
  const url = new URL(downloadUrl, document.baseURI)
  const expires = Number(url.searchParams.get("expires"))
  if (Number.isFinite(expires) && expires > 0) return expires * 1000
  const amzDate = url.searchParams.get("X-Amz-Date")
  const amzExpires = Number(url.searchParams.get("X-Amz-Expires"))
  if (amzDate !== null && Number.isFinite(amzExpires)) {
    const iso = amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z")
    const start = Date.parse(iso)
    if (!Number.isNaN(start)) return start + amzExpires * 1000
  }
  return null
}

/**
 * The exports run from this browser tab's session whose links still work. Kept in sessionStorage:
 * links are secrets that should not outlive the tab.
 */
export const recentExports = (workspaceId: string, now = Date.now()): Array<RecentExport> => {
  try {
    const stored = JSON.parse(sessionStorage.getItem(storageKey(workspaceId)) ?? "[]") as Array<RecentExport>
    return stored.filter((item) => item.expiresAt === null || item.expiresAt > now)
  } catch {
    return []
  }
}

export const rememberExport = (workspaceId: string, data: ExportData): Array<RecentExport> => {
  const next = [{ ...data, ranAt: new Date().toISOString(), expiresAt: linkExpiry(data.downloadUrl) }, ...recentExports(workspaceId)].slice(0, 20)
  try {
    sessionStorage.setItem(storageKey(workspaceId), JSON.stringify(next))
  } catch {
    // Storage full or disabled: the list just stays in memory for this page.
  }
  return next
}
