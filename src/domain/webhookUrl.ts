import { BlockList, isIP } from "node:net"
import { normalizeAddress } from "./clientAddress"

/**
 * Where a webhook may point. `https` only, and never at this network's own machines (loopback, private,
 * link-local, unique-local, and the ranges that are no public host): a webhook must not become a way to
 * reach what only the service can reach. WEBHOOKS_ALLOW_PRIVATE_ADDRESSES lifts both rules (tests,
 * single-host setups). A name is checked again where it matters, on the addresses it resolves to at
 * each delivery (`isPublicAddress`).
 */

const notPublic = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) notPublic.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [
  ["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8]
] as const) notPublic.addSubnet(network, prefix, "ipv6")

/** Whether an IP address is a public host's (an IPv4-mapped IPv6 address is judged as the IPv4 address it carries). */
export const isPublicAddress = (address: string): boolean => {
  const normalized = normalizeAddress(address)
  const family = isIP(normalized)
  if (family === 0) return false
  return !notPublic.check(normalized, family === 4 ? "ipv4" : "ipv6")
}

/** Why a webhook URL is refused, in the words the caller is told. */
export type WebhookUrlProblem = string

/** The URL as it will be called, or why it may not be. */
export const checkWebhookUrl = (
  raw: string,
  allowPrivate: boolean
): { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly problem: WebhookUrlProblem } => {
  if (!URL.canParse(raw)) return { ok: false, problem: "url must be an absolute https URL" }
  const url = new URL(raw)
  const schemes = allowPrivate ? ["https:", "http:"] : ["https:"]
  if (!schemes.includes(url.protocol)) {
    return { ok: false, problem: allowPrivate ? "url must be an http or https URL" : "url must be an https URL" }
  }
  if (url.username !== "" || url.password !== "") return { ok: false, problem: "url must not carry a user name or password" }
  if (allowPrivate) return { ok: true, url }
  const host = hostOf(url)
  if (host === "localhost" || host.endsWith(".localhost")) return { ok: false, problem: "url must not point at this machine (localhost)" }
  if (isIP(host) !== 0 && !isPublicAddress(host)) {
    return { ok: false, problem: `url must not point at a private, loopback or link-local address (${host})` }
  }
  return { ok: true, url }
}

/** The URL's host as a name or a bare IP address (IPv6 without its brackets), lower case, no trailing dot. */
export const hostOf = (url: URL): string => {
  const host = url.hostname.toLowerCase().replace(/\.$/, "")
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
}
