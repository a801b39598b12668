import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createParty, type Party } from '../../../test/helpers/fixtures.js'
import { type CommerceStack, startCommerceStack } from './stack.js'

/**
 * Issue 37 part 4 at the commerce API: every write an application makes for a person (links,
 * conversions, catalogue syncs) counts against what its standing allows in an hour; past it, an RFC
 * 9457 problem with status 429, Retry-After, and when to try again. Reads are never counted.
 */
let s: CommerceStack
beforeAll(async () => {
  s = await startCommerceStack({ appLimits: { unverified: 2, vouched: 4, verified: null } })
  s.clock.set(new Date('2026-03-01T09:45:00Z'))
})
afterAll(async () => s?.close())

async function tokenOfKind(kind: 'registered' | 'metadata_document' | 'dynamic'): Promise<string> {
  const party: Party = await createParty(s.t, { grantScopes: ['ecommerce:write', 'products:sync'] as never })
  await s.t.database.db.updateTable('clients').set({ kind }).where('id', '=', party.client.id).execute()
  return (await s.tokenFor(['ecommerce:write', 'products:sync'], party)).token
}

const newLink = (token: string) =>
  s.api('POST', '/api/links', token, { target_url: 'https://shop.example/p/1' })

describe('the leash on writes', () => {
  it('an unverified app: its limit of writes, then a 429 problem with Retry-After; reads go on', async () => {
    const token = await tokenOfKind('dynamic')
    expect((await newLink(token)).status).toBe(201)
    expect((await s.api('POST', '/api/products/sync-runs', token)).status).toBe(201)
    const refused = await newLink(token)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(refused.headers.get('retry-after')).toBe(String(15 * 60))
    expect(refused.body).toMatchObject({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      code: 'app_limit_reached',
      retry_after: 900,
      retry_at: '2026-03-01T10:00:00.000Z',
      limit: 2,
      client_standing: 'unverified',
    })
    expect(String(refused.body.detail)).toContain('at most 2 writes an hour')
    expect((await s.api('GET', '/api/links', token)).status).toBe(200)
  })

  it('a refused write (bad input) is not counted', async () => {
    const token = await tokenOfKind('dynamic')
    expect((await s.api('POST', '/api/links', token, { target_url: 'nope' })).status).toBe(400)
    expect((await newLink(token)).status).toBe(201)
    expect((await newLink(token)).status).toBe(201)
    expect((await newLink(token)).status).toBe(429)
  })

  it('vouched apps have their own limit, verified ones none', async () => {
    const vouched = await tokenOfKind('metadata_document')
    const answers = []
    for (let i = 0; i < 5; i++) answers.push((await newLink(vouched)).status)
    expect(answers).toEqual([201, 201, 201, 201, 429])
    const verified = await tokenOfKind('registered')
    for (let i = 0; i < 6; i++) expect((await newLink(verified)).status).toBe(201)
  })

  it('two concurrent writes at the limit: exactly one passes', async () => {
    const token = await tokenOfKind('dynamic')
    expect((await newLink(token)).status).toBe(201)
    const answers = await Promise.all([newLink(token), newLink(token)])
    expect(answers.map((a) => a.status).sort()).toEqual([201, 429])
  })
})
