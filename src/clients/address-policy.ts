import ipaddr from 'ipaddr.js'

/**
 * Which addresses a client's metadata document may be fetched from (SSRF, draft-ietf-oauth-client-
 * id-metadata-document §8.6). ipaddr.js classifies every IPv4 and IPv6 special-purpose range of the
 * IANA registries (loopback, private, link-local with 169.254.169.254, carrier-grade NAT, multicast,
 * broadcast, unspecified, documentation, benchmarking, unique-local, NAT64, 6to4, Teredo, …) and turns
 * IPv4-mapped IPv6 (`::ffff:10.0.0.1`) back into IPv4 first (`process`): a table we would otherwise
 * keep by hand. Only its `unicast` range, the public Internet, passes: an allow-list, so a range it
 * learns later is refused until we know it. `allowLoopback` is the test-only setting
 * (CLIENT_METADATA_TEST_CA), never on in production.
 */
export function addressProblem(address: string, options: { allowLoopback?: boolean } = {}): string | null {
  if (!ipaddr.isValid(address)) return 'is not an IP address'
  const range = ipaddr.process(address).range()
  if (range === 'unicast') return null
  if (range === 'loopback' && options.allowLoopback === true) return null
  return `is a ${range} address, not a public one`
}
