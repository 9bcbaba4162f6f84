import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { forwardedAddress, networkOf, normalizeAddress, parseTrustedProxies, resolveClientAddress, type TrustedProxies } from "../../src/domain/clientAddress"

const trusted = (text: string): TrustedProxies => {
  const parsed = Either.getOrThrow(parseTrustedProxies(text))
  if (parsed === undefined) throw new Error("no proxies")
  return parsed
}

describe("client addresses", () => {
  it("spell an address one way: IPv4-mapped IPv6 as IPv4, IPv6 in lower case", () => {
    expect(normalizeAddress("203.0.113.7")).toBe("203.0.113.7")
    expect(normalizeAddress("::ffff:203.0.113.7")).toBe("203.0.113.7")
    expect(normalizeAddress("::FFFF:203.0.113.7")).toBe("203.0.113.7")
    expect(normalizeAddress("::ffff:cb00:7107")).toBe("203.0.113.7")
    expect(normalizeAddress("2001:DB8::1")).toBe("2001:db8::1")
    expect(normalizeAddress("::1")).toBe("::1")
  })

  it("read X-Forwarded-For entries as proxies write them, and nothing that is not an address", () => {
    expect(forwardedAddress(" 203.0.113.7 ")).toBe("203.0.113.7")
    expect(forwardedAddress("203.0.113.7:5678")).toBe("203.0.113.7")
    expect(forwardedAddress("[2001:db8::1]:443")).toBe("2001:db8::1")
    expect(forwardedAddress("[2001:DB8::1]")).toBe("2001:db8::1")
    expect(forwardedAddress("\"2001:db8::2\"")).toBe("2001:db8::2")
    expect(forwardedAddress("::ffff:10.0.0.1")).toBe("10.0.0.1")
    for (const junk of ["", "unknown", "evil.example", "203.0.113", "1.2.3.4.5", "<script>", "_hidden"]) {
      expect(forwardedAddress(junk), junk).toBeUndefined()
    }
  })

  it("are the peer's when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(resolveClientAddress("::ffff:198.51.100.2", "6.6.6.6", undefined)).toBe("198.51.100.2")
    expect(resolveClientAddress("198.51.100.2", "6.6.6.6, 7.7.7.7", trusted("10.0.0.0/8"))).toBe("198.51.100.2")
    expect(resolveClientAddress(undefined, "6.6.6.6", trusted("10.0.0.0/8"))).toBeUndefined()
  })

  it("are the right-most forwarded entry that is not a trusted proxy, when the peer is one", () => {
    const proxies = trusted("10.0.0.0/8, 192.168.1.10, fd00::/8")
    // What the caller wrote (left) is never believed; what our proxies appended is.
    expect(resolveClientAddress("10.0.0.5", "6.6.6.6, 203.0.113.7", proxies)).toBe("203.0.113.7")
    expect(resolveClientAddress("10.0.0.5", "6.6.6.6, 203.0.113.7, 192.168.1.10", proxies)).toBe("203.0.113.7")
    expect(resolveClientAddress("::ffff:10.0.0.5", "203.0.113.7:4711", proxies)).toBe("203.0.113.7")
    expect(resolveClientAddress("fd00::5", "2001:DB8::7", proxies)).toBe("2001:db8::7")
    // No header: the proxy itself (a health check).
    expect(resolveClientAddress("10.0.0.5", undefined, proxies)).toBe("10.0.0.5")
    // Only proxies: the left-most of them.
    expect(resolveClientAddress("10.0.0.5", "10.1.1.1, 192.168.1.10", proxies)).toBe("10.1.1.1")
    // A hop a proxy vouches for that is no address: the last address vouched for answers for it.
    expect(resolveClientAddress("10.0.0.5", "203.0.113.7, garbage, 192.168.1.10", proxies)).toBe("192.168.1.10")
    expect(resolveClientAddress("10.0.0.5", "", proxies)).toBe("10.0.0.5")
  })

  it("reads TRUSTED_PROXIES, and names an entry that is neither an address nor a range", () => {
    expect(Either.getOrThrow(parseTrustedProxies(""))).toBeUndefined()
    expect(Either.getOrThrow(parseTrustedProxies(" , "))).toBeUndefined()
    const proxies = trusted(" 10.0.0.0/8,192.168.1.10 , ::ffff:172.16.0.0/108, 2001:db8:ffff::/48 ")
    expect(proxies.entries).toEqual(["10.0.0.0/8", "192.168.1.10", "172.16.0.0/12", "2001:db8:ffff::/48"])
    expect(["10.255.0.1", "192.168.1.10", "172.31.255.255", "2001:db8:ffff:1::9"].map(proxies.includes)).toEqual([true, true, true, true])
    expect(["11.0.0.1", "192.168.1.11", "172.32.0.1", "2001:db8:fffe::1", "unknown"].map(proxies.includes)).toEqual([false, false, false, false, false])
    for (const bad of ["10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "proxy.internal", "fd00::/129", "10.0.0.1/-1", "10.0.0.0/8/9"]) {
      expect(Either.getLeft(parseTrustedProxies(`192.168.1.10, ${bad}`)), bad).toEqual(
        expect.objectContaining({ value: expect.stringContaining(`'${bad}' is not an IP address or CIDR range`) })
      )
    }
  })

  it("group addresses by the network one customer usually holds: /24 and /64", () => {
    expect(networkOf("203.0.113.7")).toBe("203.0.113.0/24")
    expect(networkOf("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64")
    expect(networkOf("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(networkOf("2001:db8:1:2::ffff")).toBe(networkOf("2001:db8:1:2:aaaa::1"))
    expect(networkOf("::1")).toBe("0:0:0:0::/64")
    expect(networkOf("64:ff9b::203.0.113.7")).toBe("64:ff9b:0:0::/64")
    expect(networkOf("unknown")).toBe("unknown")
  })
})
