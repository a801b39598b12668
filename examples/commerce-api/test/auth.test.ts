import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCommerceApp } from '../src/app.js'
import { connectCommerceDatabase } from '../src/db/connect.js'
import { freePort } from '../../../test/helpers/net.js'
import { nowSeconds, resignedToken } from '../../../test/helpers/resource.js'
import { COMMERCE_RESOURCE, type CommerceStack, startCommerceStack } from './stack.js'

/** Scopes and audience through @linkauth/resource: every route checks both before its handler runs. */
let s: CommerceStack
let both: string
beforeAll(async () => {
  s = await startCommerceStack()
  both = (await s.tokenFor(['ecommerce:write', 'products:sync'])).token
})
afterAll(async () => s?.close())

const LINKS_RESOURCE = 'https://links.example.com/api'

describe('scopes', () => {
  it('products:sync alone syncs and reads the catalogue, but no links or conversions (403)', async () => {
    const { token } = await s.tokenFor(['products:sync'])
    expect((await s.api('GET', '/api/products', token)).status).toBe(200)
    for (const [method, path, body] of [
      ['POST', '/api/links', { target_url: 'https://a.example/' }],
      ['GET', '/api/links'],
      [
        'POST',
        '/api/conversions',
        { click_id: 'A'.repeat(22), order_id: 'o', value: '1.00', currency: 'EUR' },
      ],
      ['GET', '/api/campaigns'],
    ] as const) {
      const res = await s.api(method, path, token, body)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.error).toBe('insufficient_scope')
      expect(res.headers.get('www-authenticate')).toContain('scope="ecommerce:write"')
    }
  })

  it('ecommerce:write alone makes links and reads them back, but cannot touch the catalogue (403)', async () => {
    const { token } = await s.tokenFor(['ecommerce:write'])
    expect((await s.api('POST', '/api/links', token, { target_url: 'https://a.example/' })).status).toBe(201)
    expect((await s.api('GET', '/api/links', token)).status).toBe(200)
    for (const [method, path] of [
      ['POST', '/api/products/batch'],
      ['GET', '/api/products'],
      ['POST', '/api/products/sync-runs'],
    ] as const) {
      const res = await s.api(method, path, token, method === 'POST' ? { products: [] } : undefined)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.headers.get('www-authenticate')).toContain('scope="products:sync"')
    }
  })

  it('a token with only links scopes is refused everywhere; a refused request writes nothing', async () => {
    const { token } = await s.tokenFor(['links:read', 'links:write'] as never)
    const res = await s.api('POST', '/api/products/batch', token, {
      products: [
        {
          product_id: 'sneaky',
          title: 't',
          url: 'https://a.example/',
          price: '1.00',
          currency: 'EUR',
          availability: 'in_stock',
        },
      ],
    })
    expect(res.status).toBe(403)
    expect((await s.api('GET', '/api/products', both)).body.products).toEqual([])
  })
})

describe('audience and tokens the commerce API refuses', () => {
  const resigned = (claims: Record<string, unknown>) => resignedToken(s.t, both, claims)

  it('a token re-signed with the real key and its own audience is accepted (the control)', async () => {
    expect((await s.api('GET', '/api/products', resigned({}))).status).toBe(200)
  })

  it('a token for the links API and the commerce API (asked for without resource) is accepted', async () => {
    const res = await s.api('GET', '/api/products', resigned({ aud: [LINKS_RESOURCE, COMMERCE_RESOURCE] }))
    expect(res.status).toBe(200)
  })

  it.each([
    ['for the links API', () => resigned({ aud: LINKS_RESOURCE })],
    ['of the single audience before per-API tokens', () => resigned({ aud: `${s.issuer}/api` })],
    ['expired', () => resigned({ iat: nowSeconds() - 3600, exp: nowSeconds() - 3000 })],
    ['from another issuer', () => resigned({ iss: 'https://evil.example' })],
    ['not a JWT at all', () => 'definitely-not-a-token'],
  ])('%s → 401 invalid_token', async (_what, token) => {
    const res = await s.api('GET', '/api/products', token())
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('invalid_token')
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="commerce-api", resource_metadata="https:\/\/commerce\.example\.com\/\.well-known\/oauth-protected-resource\/api", error="invalid_token"/,
    )
  })

  it('no token → 401 naming the metadata, which says the identifier, linkauth and the scopes (RFC 9728)', async () => {
    const none = await s.api('GET', '/api/links', undefined)
    expect(none.status).toBe(401)
    // Bearer and DPoP (RFC 9449 §7.1): the API takes DPoP-bound tokens too, and says which proofs.
    const metadataUrl = 'https://commerce.example.com/.well-known/oauth-protected-resource/api'
    expect(none.headers.get('www-authenticate')).toBe(
      `Bearer realm="commerce-api", resource_metadata="${metadataUrl}", ` +
        `DPoP realm="commerce-api", resource_metadata="${metadataUrl}", algs="ES256 EdDSA Ed25519 PS256"`,
    )
    const res = await fetch(`${s.base}/.well-known/oauth-protected-resource/api`)
    expect(await res.json()).toEqual({
      resource: COMMERCE_RESOURCE,
      authorization_servers: [s.issuer],
      scopes_supported: ['products:sync', 'ecommerce:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'Commerce API',
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'PS256'],
      dpop_bound_access_tokens_required: false,
    })
  })
})

it('a database that is down answers 503 problem with Retry-After (a page on short URLs), never a 500', async () => {
  const port = await freePort()
  const down = await connectCommerceDatabase({
    url: 'postgres://postgres@127.0.0.1:1/none',
    dataDir: '',
    poolSize: 1,
  })
  const app = await buildCommerceApp({
    config: { publicUrl: `http://127.0.0.1:${port}` },
    db: down.db,
    verifier: s.verifier,
  })
  await app.listen({ port, host: '127.0.0.1' })
  try {
    const base = `http://127.0.0.1:${port}`
    const list = await s.api('GET', '/api/products', both, undefined, { base })
    expect(list.status).toBe(503)
    expect(list.headers.get('retry-after')).toBe('5')
    expect(list.body).toMatchObject({ status: 503, code: 'temporarily_unavailable' })
    const hop = await s.api('GET', '/some-slug', undefined, undefined, { base })
    expect(hop.status).toBe(503)
    expect(hop.text).toContain('unavailable for a moment')
    expect((await s.api('GET', '/readyz', undefined, undefined, { base })).status).toBe(503)
  } finally {
    await app.close()
    await down.close()
  }
})
