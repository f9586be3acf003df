// src/webhooks: delivering webhooks: the address guard, signing and the sender loop.

import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** Which addresses a webhook may not reach. */

/** Why an address is refused. */
export interface AddressRule {
  /** Names the rule in a message: "a loopback address", "the cloud metadata address"… */
  name: string
  /** Refused even with WEBHOOK_ALLOW_PRIVATE=true: no receiver can live there. */
  always: boolean
}

type Table = Array<[AddressRule, string[]]>

const METADATA: AddressRule = { name: 'the cloud metadata address', always: true }
const UNSPECIFIED: AddressRule = { name: 'an unspecified address', always: true }
const BROADCAST: AddressRule = { name: 'the broadcast address', always: true }
const MULTICAST: AddressRule = { name: 'a multicast address', always: true }
const LOOPBACK: AddressRule = { name: 'a loopback address', always: false }
const PRIVATE: AddressRule = { name: 'a private address', always: false }
const LINK_LOCAL: AddressRule = { name: 'a link-local address', always: false }
const SHARED: AddressRule = { name: 'a carrier-grade NAT address', always: false }
const RESERVED: AddressRule = { name: 'a reserved address', always: false }

// First match wins, so the metadata addresses come before the link-local and
// unique-local ranges that hold them. 169.254.170.2 is the ECS task credentials endpoint.
const IPV4: Table = [
  [METADATA, ['169.254.169.254/32', '169.254.170.2/32']],
  [UNSPECIFIED, ['0.0.0.0/8']],
  [BROADCAST, ['255.255.255.255/32']],
  [MULTICAST, ['224.0.0.0/4']],
  [LOOPBACK, ['127.0.0.0/8']],
  [PRIVATE, ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  [LINK_LOCAL, ['169.254.0.0/16']],
  [SHARED, ['100.64.0.0/10']],
  // IETF protocol assignments, documentation, the old 6to4 relays, benchmarking, class E.
  [RESERVED, ['192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4']]
]

const IPV6: Table = [
  [METADATA, ['fd00:ec2::254/128']],
  [UNSPECIFIED, ['::/128']],
  [LOOPBACK, ['::1/128']],
  [MULTICAST, ['ff00::/8']],
  // Unique local, and the deprecated site-local.
  [PRIVATE, ['fc00::/7', 'fec0::/10']],
  [LINK_LOCAL, ['fe80::/10']],
  // The local-use NAT64 prefix (where its IPv4 sits is the network's choice), IETF protocol assignments.
  [RESERVED, ['64:ff9b:1::/48', '2001::/23', '2001:db8::/32', '3fff::/20']]
]

function compile (table: Table): Array<[AddressRule, Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>]> {
  return table.map(([rule, ranges]) => [rule, ranges.map((range) => ipaddr.parseCIDR(range))])
}

const IPV4_RANGES = compile(IPV4)
const IPV6_RANGES = compile(IPV6)

function match (address: ipaddr.IPv4 | ipaddr.IPv6, ranges: typeof IPV4_RANGES): AddressRule | undefined {
  return ranges.find(([, cidrs]) => cidrs.some((cidr) => address.match(cidr)))?.[0]
}

function ipv4 (high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
}

// IPv6 forms that carry an IPv4 address, which is then the one that matters.
const LAST_32 = (p: number[]): ipaddr.IPv4 => ipv4(p[6], p[7])
const EMBEDDED: Array<[[ipaddr.IPv6, number], (parts: number[]) => ipaddr.IPv4]> = [
  [ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), LAST_32],
  [ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'), LAST_32],
  [ipaddr.IPv6.parseCIDR('64:ff9b::/96'), LAST_32],
  [ipaddr.IPv6.parseCIDR('2002::/16'), (p) => ipv4(p[1], p[2])]
]
const COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96')
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3')

function classifyIPv6 (address: ipaddr.IPv6): AddressRule | undefined {
  for (const [cidr, extract] of EMBEDDED) {
    if (address.match(cidr)) return match(extract(address.parts), IPV4_RANGES)
  }
  const rule = match(address, IPV6_RANGES)
  if (rule !== undefined) return rule
  // ::a.b.c.d is never routed as such; name what it embeds when that is refused too.
  if (address.match(COMPATIBLE)) return match(LAST_32(address.parts), IPV4_RANGES) ?? RESERVED
  // Only 2000::/3 is allocated for global unicast; the rest of the space is reserved.
  return address.match(GLOBAL_UNICAST) ? undefined : RESERVED
}

// ipaddr.js reads `::a.b.c.d` as IPv4-mapped; it is the IPv4-compatible form, which is not mapped.
function parseIPv6 (text: string): ipaddr.IPv6 {
  const compatible = /^::(\d+\.\d+\.\d+\.\d+)(%.*)?$/.exec(text)
  if (compatible === null) return ipaddr.IPv6.parse(text)
  const [a, b, c, d] = ipaddr.IPv4.parse(compatible[1]).octets
  return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, a << 8 | b, c << 8 | d])
}

/** The rule that refuses a literal IP address. */
export function classifyAddress (address: string): AddressRule | undefined {
  const family = isIP(address)
  if (family === 4) return match(ipaddr.IPv4.parse(address), IPV4_RANGES)
  if (family === 6) return classifyIPv6(parseIPv6(address))
  return RESERVED
}

/** The rule's name when `address` may not be reached under this setting, else undefined. */
export function refusedAddress (address: string, allowPrivate: boolean): string | undefined {
  const rule = classifyAddress(address)
  return rule === undefined || (allowPrivate && !rule.always) ? undefined : rule.name
}
