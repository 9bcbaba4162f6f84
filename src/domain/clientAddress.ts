import { Either } from "effect"
import { BlockList, isIP } from "node:net"

/**
 * The client address of a request (throttles, audit log, access log): the connection's peer, or, when
 * that peer is one of the proxies named in TRUSTED_PROXIES, the right-most `X-Forwarded-For` entry that
 * is not one of them. Everything left of it was written by whoever called the first proxy, so it is
 * never believed; from anyone else the header is ignored altogether.
 */

/** The proxies whose `X-Forwarded-For` is believed: addresses and CIDR ranges. */
export interface TrustedProxies {
  /** The entries as configured (normalized), for messages. */
  readonly entries: ReadonlyArray<string>
  readonly includes: (address: string) => boolean
}

const mappedPrefix = "::ffff:"

/** `::ffff:a.b.c.d` or `::ffff:XXXX:XXXX` as the IPv4 address it carries, else undefined. */
const mappedIPv4 = (address: string): string | undefined => {
  if (address.charCodeAt(0) !== 58 /* ":" */) return undefined
  if (address.length <= mappedPrefix.length || address.slice(0, mappedPrefix.length).toLowerCase() !== mappedPrefix) return undefined
  const rest = address.slice(mappedPrefix.length)
  if (isIP(rest) === 4) return rest
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(rest)
  if (hex === null) return undefined
  const high = parseInt(hex[1]!, 16)
  const low = parseInt(hex[2]!, 16)
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
}

/**
 * One spelling per address: an IPv4-mapped IPv6 address (what a dual-stack socket reports for an IPv4
 * client) as the IPv4 address, IPv6 in lower case. Anything that is not an IP address is returned as is.
 */
export const normalizeAddress = (address: string): string =>
  mappedIPv4(address) ?? (address.includes(":") ? address.toLowerCase() : address)

/**
 * One `X-Forwarded-For` entry as an address, or undefined when it is none: `1.2.3.4`, `2001:db8::1`,
 * and the forms some proxies write, with a port (`1.2.3.4:5678`, `[2001:db8::1]:443`) or quoted.
 */
export const forwardedAddress = (entry: string): string | undefined => {
  let text = entry.trim()
  if (text.startsWith("\"") && text.endsWith("\"") && text.length >= 2) text = text.slice(1, -1)
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text)
  if (bracketed !== null) text = bracketed[1]!
  else if (/^[\d.]+:\d{1,5}$/.test(text)) text = text.slice(0, text.indexOf(":"))
  return isIP(text) === 0 ? undefined : normalizeAddress(text)
}

/**
 * The client address of a connection from `peer` that carried `forwardedFor` (the header's value, its
 * repeated lines joined by commas). Undefined only when the socket has no peer address (already closed).
 */
export const resolveClientAddress = (
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedProxies | undefined
): string | undefined => {
  if (peer === undefined) return undefined
  const client = normalizeAddress(peer)
  if (trusted === undefined || forwardedFor === undefined || !trusted.includes(client)) return client
  const entries = forwardedFor.split(",")
  // Walk right to left over the hops our proxies vouch for; the first one that is not a proxy is the client.
  let current = client
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = forwardedAddress(entries[i]!)
    // A trusted proxy that wrote something that is not an address: the last hop we can vouch for answers for it.
    if (entry === undefined) return current
    current = entry
    if (!trusted.includes(entry)) return entry
  }
  return current
}

/**
 * TRUSTED_PROXIES: addresses or CIDR ranges separated by commas (`10.0.0.0/8, 192.168.1.10, fd00::/8`).
 * Empty: none (undefined). Left: the first entry that is neither, for the start-up error.
 */
export const parseTrustedProxies = (text: string): Either.Either<TrustedProxies | undefined, string> => {
  const list = new BlockList()
  const entries: Array<string> = []
  for (const raw of text.split(",").map((part) => part.trim()).filter((part) => part !== "")) {
    const slash = raw.indexOf("/")
    const address = normalizeAddress(slash === -1 ? raw : raw.slice(0, slash))
    const family = isIP(address)
    const bits = slash === -1 ? undefined : raw.slice(slash + 1)
    const maxBits = family === 4 ? 32 : 128
    // A mapped IPv4 range (::ffff:10.0.0.0/104) is the IPv4 range it maps.
    const prefix = bits === undefined ? undefined : Number(bits) - (family === 4 && raw.includes(":") ? 96 : 0)
    if (family === 0 || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || prefix! < 0 || prefix! > maxBits))) {
      return Either.left(
        `'${raw}' is not an IP address or CIDR range; expected addresses or ranges separated by commas, such as 10.0.0.0/8, 192.168.1.10, fd00::/8`
      )
    }
    const type = family === 4 ? "ipv4" : "ipv6"
    if (prefix === undefined) list.addAddress(address, type)
    else list.addSubnet(address, prefix, type)
    entries.push(prefix === undefined ? address : `${address}/${prefix}`)
  }
  if (entries.length === 0) return Either.right(undefined)
  return Either.right({
    entries,
    includes: (address) => {
      const family = isIP(address)
      return family !== 0 && list.check(address, family === 4 ? "ipv4" : "ipv6")
    }
  })
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail counts as two). */
const ipv6Groups = (address: string): ReadonlyArray<number> => {
  const zoneless = address.split("%")[0]!
  const toGroups = (part: string): Array<number> =>
    part === ""
      ? []
      : part.split(":").flatMap((group) => {
        if (!group.includes(".")) return [parseInt(group, 16)]
        const [a, b, c, d] = group.split(".").map(Number) as [number, number, number, number]
        return [(a << 8) | b, (c << 8) | d]
      })
  const gap = zoneless.indexOf("::")
  if (gap === -1) return toGroups(zoneless)
  const head = toGroups(zoneless.slice(0, gap))
  const tail = toGroups(zoneless.slice(gap + 2))
  return [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}

/**
 * The network an address belongs to, as one provider hands them out: its /24 for IPv4, its /64 for
 * IPv6 (one customer's whole allocation, often). What counts failures across rotating addresses.
 */
export const networkOf = (address: string): string => {
  const family = isIP(address)
  if (family === 4) return `${address.slice(0, address.lastIndexOf("."))}.0/24`
  if (family === 6) return `${ipv6Groups(address).slice(0, 4).map((group) => group.toString(16)).join(":")}::/64`
  return address
}
