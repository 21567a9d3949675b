/**
 * Which IP addresses `fetch_url` may connect to. A research sub-agent follows
 * URLs a model chose (or a web page suggested), so without a policy it could
 * be steered at the server's own network: loopback, private ranges, cloud
 * metadata endpoints (link-local 169.254.169.254). Everything that is not a
 * public unicast address is refused, unless `FETCH_ALLOW_PRIVATE=1`.
 *
 * The check applies to the addresses a hostname resolves to, at connect time
 * (`PageFetcher` installs it as the socket's DNS lookup), so a name that
 * resolves to a public address when checked and a private one when used
 * (DNS rebinding) cannot get through.
 */
import { BlockList, isIPv4, isIPv6 } from "node:net"

const nonPublic = new BlockList()
// IPv4: "this network", private, carrier-grade NAT, loopback, link-local, IETF protocol
// assignments, documentation, benchmarking, multicast, reserved and broadcast.
for (
  const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.88.99.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const
) nonPublic.addSubnet(net, prefix, "ipv4")
// IPv6: unspecified, loopback, NAT64 and 6to4 (both embed an IPv4 address we would not see),
// discard, documentation, unique local, link-local, site-local, multicast.
for (
  const [net, prefix] of [
    ["::", 128],
    ["::1", 128],
    ["64:ff9b::", 96],
    ["64:ff9b:1::", 48],
    ["100::", 64],
    ["2001:db8::", 32],
    ["2002::", 16],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10],
    ["ff00::", 8]
  ] as const
) nonPublic.addSubnet(net, prefix, "ipv6")

/** The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible (`::a.b.c.d`) IPv6 address. */
const embeddedIPv4 = (ipv6: string): string | undefined => {
  // The URL parser canonicalizes every spelling (`0:0:0:0:0:ffff:7f00:1`, `::FFFF:127.0.0.1`) to `[::ffff:7f00:1]`.
  let canonical: string
  try {
    canonical = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
  const match = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical)
  if (match === null) return undefined
  const high = parseInt(match[1]!, 16)
  const low = parseInt(match[2]!, 16)
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
}

/** True for a public unicast address; false for anything else, including what is not an IP address at all. */
export const isPublicAddress = (address: string): boolean => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  if (isIPv4(bare)) return !nonPublic.check(bare, "ipv4")
  if (isIPv6(bare)) {
    const inner = embeddedIPv4(bare)
    if (inner !== undefined) return !nonPublic.check(inner, "ipv4")
    return !nonPublic.check(bare, "ipv6")
  }
  return false
}
