import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addressProblem } from '../../src/clients/address-policy.js'
import {
  DocumentFetchBusy,
  DocumentFetchError,
  fetchClientDocument,
} from '../../src/clients/document-fetch.js'
import { createFetchSlots } from '../../src/clients/fetch-slots.js'
import { hostMatches, normalizeHostName } from '../../src/clients/host-policy.js'
import { trustPolicyProblem } from '../../src/clients/trust-policy.js'
import { freshnessSeconds } from '../../src/clients/document-check.js'
import { clientIdUrlProblem, isClientId } from '../../src/lib/identifiers.js'
import { loadConfig } from '../../src/config.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'

/**
 * Fetching a Client ID Metadata Document is fetching a URL anyone may hand us (SSRF): these are the
 * refusals of issue 27, against a real HTTPS server on 127.0.0.1 with a certificate made at start.
 */

let server: DocumentServer
let ca: string
beforeAll(async () => {
  server = await startDocumentServer()
  ca = readFileSync(server.caPath, 'utf8')
})
afterAll(async () => server.close())

const options = () => ({ timeoutMs: 2000, maxBytes: 5120, testCa: ca })
const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(DocumentFetchError)
  return (err as Error).message
}

describe('the address filter', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:a00:1::', '6to4'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressProblem(address)).toBe(`is a ${range} address, not a public one`)
  })
  it.each([
    ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
    ['::a00:1', 'IPv4-compatible 10.0.0.1'],
    ['::a9fe:a9fe', 'IPv4-compatible 169.254.169.254'],
    ['::c0a8:1', 'IPv4-compatible 192.168.0.1'],
    ['::808:808', 'IPv4-compatible 8.8.8.8'],
    ['1::1', '::/8'],
    ['4000::1', 'unallocated'],
    ['e000::1', 'unallocated'],
  ])('refuses IPv6 outside global unicast: %s (%s)', (address) => {
    expect(addressProblem(address)).toBe('is outside IPv6 global unicast (2000::/3), not a public one')
  })
  it('passes IPv6 only within 2000::/3, and an IPv4-mapped address as its IPv4 (property)', () => {
    const globalUnicast = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number]
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const parsed = ipaddr.process(address)
        if (addressProblem(address) === null && parsed.kind() === 'ipv6')
          expect((parsed as ipaddr.IPv6).match(globalUnicast)).toBe(true)
      }),
      { numRuns: 2000 },
    )
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        expect(addressProblem(`::ffff:${v4}`)).toBe(addressProblem(v4))
      }),
      { numRuns: 500 },
    )
  })
  it('accepts public addresses, and loopback only with the test setting', () => {
    expect(addressProblem('93.184.216.34')).toBeNull()
    expect(addressProblem('2606:4700::1111')).toBeNull()
    expect(addressProblem('::ffff:8.8.8.8')).toBeNull()
    expect(addressProblem('2a00:1450:4001::1')).toBeNull()
    expect(addressProblem('127.0.0.1', { allowLoopback: true })).toBeNull()
    expect(addressProblem('10.0.0.1', { allowLoopback: true })).not.toBeNull()
    expect(addressProblem('not-an-address')).toBe('is not an IP address')
  })
})

describe('SSRF targets are refused before any connection', () => {
  const noTest = { timeoutMs: 2000, maxBytes: 5120 }
  it.each([
    'https://127.0.0.1/client.json',
    'https://[::1]/client.json',
    'https://10.0.0.8/client.json',
    'https://169.254.169.254/latest/meta-data',
    'https://[::ffff:169.254.169.254]/x',
    'https://[fd00::1]/client.json',
  ])('%s', async (url) => {
    expect(await refusal(fetchClientDocument(url, noTest))).toMatch(/not a public one/)
  })
  it('the local test server itself, without the test setting', async () => {
    server.publish('/direct.json', clientDocument(server.url('/direct.json')))
    expect(await refusal(fetchClientDocument(server.url('/direct.json'), noTest))).toMatch(/loopback/)
    expect(server.hits('/direct.json')).toBe(0)
  })
  it('a DNS name resolving to a private address, or to a public and a private one', async () => {
    for (const addresses of [['10.0.0.7'], ['93.184.216.34', '192.168.0.1'], ['::ffff:127.0.0.1']]) {
      const message = await refusal(
        fetchClientDocument('https://agent.example/client.json', {
          ...noTest,
          resolve: async () => addresses,
        }),
      )
      expect(message).toMatch(/agent\.example resolves to .* not a public one/)
    }
  })
  it('a name that does not resolve', async () => {
    const message = await refusal(
      fetchClientDocument('https://agent.example/client.json', {
        ...noTest,
        resolve: async () => {
          throw new Error('ENOTFOUND')
        },
      }),
    )
    expect(message).toBe('its host agent.example does not resolve')
  })
  it('connects to the checked address: a name is resolved once, never again by the connection', async () => {
    let resolutions = 0
    const id = server.url('/by-name.json').replace('127.0.0.1', 'localhost')
    server.publish('/by-name.json', clientDocument(id))
    const fetched = await fetchClientDocument(id, {
      ...options(),
      resolve: async () => {
        resolutions++
        return ['127.0.0.1']
      },
    })
    expect(resolutions).toBe(1)
    expect((fetched.body as { client_id: string }).client_id).toBe(id)
  })
})

describe('what a reachable server answers', () => {
  it('a document: its JSON and Cache-Control', async () => {
    const id = server.publish('/ok.json', clientDocument(server.url('/ok.json')), {
      'cache-control': 'max-age=600',
    })
    const fetched = await fetchClientDocument(id, options())
    expect(fetched.body).toMatchObject({ client_id: id })
    expect(fetched.cacheControl).toBe('max-age=600')
  })
  it('a redirect (to a private address) is never followed', async () => {
    const id = server.answer('/moved.json', {
      status: 302,
      headers: { location: 'https://169.254.169.254/latest/meta-data' },
    })
    expect(await refusal(fetchClientDocument(id, options()))).toBe(
      'it answered 302: redirects are not followed',
    )
  })
  it('an oversized document, declared or streamed', async () => {
    const big = JSON.stringify(clientDocument(server.url('/big.json'), { client_name: 'x'.repeat(6000) }))
    const id = server.answer('/big.json', { body: big })
    expect(await refusal(fetchClientDocument(id, options()))).toBe('it is larger than 5120 bytes')
    const chunked = server.answer('/chunked.json', {
      body: big,
      headers: { 'transfer-encoding': 'chunked' },
    })
    expect(await refusal(fetchClientDocument(chunked, options()))).toBe('it is larger than 5120 bytes')
  })
  it('a slow document: cut at the time limit', async () => {
    const id = server.answer('/slow.json', { body: '{}', delayMs: 5000 })
    expect(await refusal(fetchClientDocument(id, { ...options(), timeoutMs: 300 }))).toBe(
      'it did not answer within 300 ms',
    )
  })
  it('another status, another media type, not JSON', async () => {
    expect(await refusal(fetchClientDocument(server.url('/missing.json'), options()))).toBe(
      'it answered 404, not 200',
    )
    const html = server.answer('/page.html', { body: '<html>', headers: { 'content-type': 'text/html' } })
    expect(await refusal(fetchClientDocument(html, options()))).toBe('its answer is not application/json')
    const broken = server.answer('/broken.json', { body: '{"client_id":' })
    expect(await refusal(fetchClientDocument(broken, options()))).toBe('its answer is not valid JSON')
  })
  it('a certificate no trusted CA signed', async () => {
    const id = server.publish('/untrusted.json', clientDocument(server.url('/untrusted.json')))
    // Loopback allowed (a test CA is set) but the CA given is not the one that signed the server's.
    const other = await startDocumentServer()
    const otherCa = readFileSync(other.caPath, 'utf8')
    await other.close()
    expect(await refusal(fetchClientDocument(id, { ...options(), testCa: otherCa }))).toBe(
      'its TLS certificate is not valid for its host',
    )
  })
})

/** A DNS lookup that answers only when the test says so. */
function heldLookup() {
  let answer: (addresses: string[]) => void = () => {}
  const lookup = new Promise<string[]>((resolve) => (answer = resolve))
  return { resolve: async () => lookup, answer: (addresses: string[]) => answer(addresses) }
}

describe('one deadline and a cap on fetches at once', () => {
  it('a DNS lookup counts against the deadline', async () => {
    const held = heldLookup()
    const message = await refusal(
      fetchClientDocument('https://slow-dns.example/client.json', {
        ...options(),
        timeoutMs: 300,
        resolve: held.resolve,
      }),
    )
    expect(message).toBe('it did not answer within 300 ms')
    held.answer([])
  })
  it('past the cap a fetch waits for a slot, or is told the server is busy at its deadline', async () => {
    const slots = createFetchSlots(1)
    const fast = server.publish('/slots/fast.json', clientDocument(server.url('/slots/fast.json')))
    const slow = server.answer('/slots/slow.json', {
      body: JSON.stringify(clientDocument(server.url('/slots/slow.json'))),
      delayMs: 200,
    })
    // The second waits while the first holds the only slot, then gets it.
    const both = await Promise.all([
      fetchClientDocument(slow, { ...options(), slots }),
      fetchClientDocument(fast, { ...options(), slots }),
    ])
    expect(both.map((d) => (d.body as { client_id: string }).client_id)).toEqual([slow, fast])

    // A lookup given up at its deadline keeps its slot until it settles (a pool thread is busy).
    const held = heldLookup()
    expect(
      await refusal(
        fetchClientDocument('https://slow-dns.example/client.json', {
          ...options(),
          timeoutMs: 200,
          resolve: held.resolve,
          slots,
        }),
      ),
    ).toBe('it did not answer within 200 ms')
    const busy = await fetchClientDocument(fast, { ...options(), timeoutMs: 200, slots }).catch(
      (e: unknown) => e,
    )
    expect(busy).toBeInstanceOf(DocumentFetchBusy)
    expect((busy as Error).message).toBe(
      'this server is fetching as many documents as it may at once; try again in a moment',
    )
    held.answer([])
    await new Promise((resolve) => setImmediate(resolve))
    const fetched = await fetchClientDocument(fast, { ...options(), slots })
    expect(fetched.body).toMatchObject({ client_id: fast })
  })
})

describe('client_id URLs, host lists and caching bounds', () => {
  it.each([
    ['https://agent.example/client.json', null],
    ['https://agent.example:8443/oauth/client?v=1', null],
    ['http://agent.example/client.json', 'must be an https URL of printable characters without spaces'],
    ['https://agent.example', 'must have a path'],
    ['https://agent.example/', 'must have a path'],
    ['https://agent.example/a/../client.json', 'must not contain "." or ".." path segments'],
    ['https://agent.example/a/%2e%2E/client.json', 'must not contain "." or ".." path segments'],
    ['https://agent.example/client.json#x', 'must not contain a fragment'],
    ['https://user:pw@agent.example/client.json', 'must not contain a user name or password'],
    [`https://agent.example/${'a'.repeat(120)}`, 'must be at most 128 characters'],
    ['https://agent.example/a b', 'must be an https URL of printable characters without spaces'],
    ['https://agent.example./client.json', 'must not have a host name ending in a dot'],
    ['https://agent.example.:8443/client.json', 'must not have a host name ending in a dot'],
  ])('%s', (url, problem) => {
    expect(clientIdUrlProblem(url)).toBe(problem)
    expect(isClientId(url)).toBe(problem === null)
  })
  it('matches hosts exactly or by subdomain wildcard, with a port when given', () => {
    expect(hostMatches('agent.example', 'agent.example')).toBe(true)
    expect(hostMatches('agent.example', 'agent.example:8443')).toBe(true)
    expect(hostMatches('agent.example:443', 'agent.example:8443')).toBe(false)
    expect(hostMatches('agent.example', 'evil-agent.example')).toBe(false)
    expect(hostMatches('*.example.com', 'a.b.example.com')).toBe(true)
    expect(hostMatches('*.example.com', 'example.com')).toBe(false)
    expect(hostMatches('*.example.com', 'badexample.com')).toBe(false)
  })
  it('compares hosts normalized: case, one trailing dot, IDNA to ASCII', () => {
    expect(hostMatches('evil.example', 'evil.example.:8443')).toBe(true)
    expect(hostMatches('evil.example', 'EVIL.Example.')).toBe(true)
    expect(hostMatches('EVIL.example.', 'evil.example')).toBe(true)
    expect(hostMatches('evil.example:8443', 'evil.example.:8443')).toBe(true)
    expect(hostMatches('*.evil.example', 'a.evil.example.')).toBe(true)
    expect(hostMatches('bücher.example', new URL('https://b%C3%BCcher.example/c').host)).toBe(true)
    expect(hostMatches('*.Bücher.example', 'shop.xn--bcher-kva.example')).toBe(true)
    expect(hostMatches('evil.example', 'evil.example..')).toBe(false)
    expect(normalizeHostName('Bücher.Example.')).toBe('xn--bcher-kva.example')
  })
  it('the trust policy refuses a denied host however it is spelled', () => {
    const policy = (denied: string[]) => ({
      clientMetadataDocuments: true,
      clientMetadataAllowedHosts: [],
      clientMetadataDeniedHosts: denied,
    })
    // Refused twice over: the URL's host ends in a dot, and it is the denied host.
    expect(trustPolicyProblem(policy(['evil.example']), 'https://evil.example.:8443/c.json')).toMatch(
      /ending in a dot/,
    )
    expect(trustPolicyProblem(policy(['EVIL.EXAMPLE.']), 'https://evil.example:8443/c.json')).toBe(
      'Applications from evil.example:8443 are not accepted here.',
    )
    expect(trustPolicyProblem(policy(['bücher.example']), 'https://b%C3%BCcher.example/c.json')).toBe(
      'Applications from xn--bcher-kva.example are not accepted here.',
    )
    expect(trustPolicyProblem(policy(['evil.example']), 'https://good.example/c.json')).toBeNull()
  })
  it('keeps a document at least 5 minutes and at most 24 hours', () => {
    expect(freshnessSeconds(undefined, 300, 86_400)).toBe(300)
    expect(freshnessSeconds('no-store', 300, 86_400)).toBe(300)
    expect(freshnessSeconds('public, max-age=60', 300, 86_400)).toBe(300)
    expect(freshnessSeconds('max-age=3600', 300, 86_400)).toBe(3600)
    expect(freshnessSeconds('max-age=99999999', 300, 86_400)).toBe(86_400)
  })
  it('refuses the test-only trust setting in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', CLIENT_METADATA_TEST_CA: '/tmp/ca.pem' })).toThrow(
      /CLIENT_METADATA_TEST_CA: expected unset with NODE_ENV=production/,
    )
    expect(loadConfig({}).clientMetadataTestCa).toBeUndefined()
  })
})
