import ipaddr from 'ipaddr.js'

/** IPv6 global unicast (RFC 4291 §2.4): the only IPv6 block the public Internet is numbered from. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number]

/**
 * Which addresses a client's metadata document may be fetched from (SSRF, draft-ietf-oauth-client-
 * id-metadata-document §8.6). ipaddr.js classifies every IPv4 and IPv6 special-purpose range of the
 * IANA registries (loopback, private, link-local with 169.254.169.254, carrier-grade NAT, multicast,
 * broadcast, unspecified, documentation, benchmarking, unique-local, NAT64, 6to4, Teredo, …) and turns
 * IPv4-mapped IPv6 (`::ffff:10.0.0.1`) back into IPv4 first (`process`): a table we would otherwise
 * keep by hand. Only its `unicast` range, the public Internet, passes: an allow-list, so a range it
 * learns later is refused until we know it. It calls all of IPv6 outside its special ranges unicast,
 * IPv4-compatible `::7f00:1` and unallocated `4000::/2` included, so an IPv6 address must also be
 * global unicast (2000::/3). `allowLoopback` is the test-only setting (CLIENT_METADATA_TEST_CA),
 * never on in production.
 */
export function addressProblem(address: string, options: { allowLoopback?: boolean } = {}): string | null {
  if (!ipaddr.isValid(address)) return 'is not an IP address'
  const parsed = ipaddr.process(address)
  const range = parsed.range()
  if (range === 'loopback' && options.allowLoopback === true) return null
  if (parsed.kind() === 'ipv6' && range === 'unicast') {
    // ::/8 (IPv4-compatible ::a00:1 is 10.0.0.1 to some stacks) and every other unallocated block.
    if (!parsed.match(GLOBAL_UNICAST)) return 'is outside IPv6 global unicast (2000::/3), not a public one'
  }
  if (range === 'unicast') return null
  return `is a ${range} address, not a public one`
}
