import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CommerceStack, startCommerceStack } from './stack.js'

/** The catalogue over real HTTP: idempotent upserts, full syncs that never delete, paging, isolation. */
let s: CommerceStack
let shop: string
beforeAll(async () => {
  s = await startCommerceStack()
  shop = (await s.tokenFor(['products:sync'])).token
})
afterAll(async () => s?.close())

const product = (id: string, extra: Record<string, unknown> = {}) => ({
  product_id: id,
  title: `Product ${id}`,
  url: `https://shop.example/p/${id}`,
  price: '19.99',
  currency: 'EUR',
  availability: 'in_stock',
  image_url: `https://cdn.shop.example/${id}.jpg`,
  ...extra,
})

const batch = (token: string, products: unknown[], extra: Record<string, unknown> = {}) =>
  s.api('POST', '/api/products/batch', token, { products, ...extra })

async function all(token: string, query = '') {
  const res = await s.api('GET', `/api/products?limit=1000${query}`, token)
  expect(res.status).toBe(200)
  // Within one updated_at the order is by our internal id: sort by the shop's id to compare.
  const products = res.body.products as Record<string, unknown>[]
  return products.sort((a, b) => String(a.product_id).localeCompare(String(b.product_id)))
}

describe('batch upsert by the shop’s product id', () => {
  it('creates, then the same batch again changes nothing (updated_at kept), then a change updates one', async () => {
    const { token } = await s.tokenFor(['products:sync'])
    s.clock.set(new Date('2026-05-01T10:00:00.000Z'))
    const first = await batch(token, [product('a'), product('b', { price_minor: 500, price: undefined })])
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ received: 2, created: 2, updated: 0, unchanged: 0 })
    const before = await all(token)
    expect(before.map((p) => [p.product_id, p.price, p.price_minor])).toEqual([
      ['a', '19.99', 1999],
      ['b', '5.00', 500],
    ])

    s.clock.set(new Date('2026-05-01T11:00:00.000Z'))
    const again = await batch(token, [product('a'), product('b', { price_minor: 500, price: undefined })])
    expect(again.body).toEqual({ received: 2, created: 0, updated: 0, unchanged: 2 })
    expect(await all(token)).toEqual(before)
    // The same price given the other way is the same price.
    const sameOtherWay = await batch(token, [product('a', { price: undefined, price_minor: 1999 })])
    expect(sameOtherWay.body).toEqual({ received: 1, created: 0, updated: 0, unchanged: 1 })

    const changed = await batch(token, [product('a', { title: 'New title' }), product('c')])
    expect(changed.body).toEqual({ received: 2, created: 1, updated: 1, unchanged: 0 })
    const after = await all(token)
    const a = after.find((p) => p.product_id === 'a')!
    expect(a).toMatchObject({
      title: 'New title',
      updated_at: '2026-05-01T11:00:00.000Z',
      created_at: '2026-05-01T10:00:00.000Z',
    })
    expect(after.find((p) => p.product_id === 'b')!.updated_at).toBe('2026-05-01T10:00:00.000Z')

    const one = await s.api('GET', '/api/products/a', token)
    expect(one.status).toBe(200)
    expect(one.body).toEqual(a)
    expect(one.headers.get('cache-control')).toBe('no-store')
  })

  it('reads amounts in the currency’s minor unit: JPY has none, KWD three', async () => {
    const { token } = await s.tokenFor(['products:sync'])
    const res = await batch(token, [
      product('yen', { price: '1999', currency: 'JPY' }),
      product('dinar', { price: '1.5', currency: 'KWD' }),
      product('big', { price_minor: 1_000_000_000_000_000, price: undefined, currency: 'USD' }),
    ])
    expect(res.status).toBe(200)
    const listed = await all(token)
    expect(listed.map((p) => [p.product_id, p.price, p.price_minor, p.currency])).toEqual([
      ['big', '10000000000000.00', 1_000_000_000_000_000, 'USD'],
      ['dinar', '1.500', 1500, 'KWD'],
      ['yen', '1999', 1999, 'JPY'],
    ])
  })

  it('each user sees only their own catalogue, and the same shop id is theirs alone', async () => {
    const alice = (await s.tokenFor(['products:sync'])).token
    const bob = (await s.tokenFor(['products:sync'])).token
    await batch(alice, [product('shared-id', { title: 'Alice’s' })])
    await batch(bob, [product('shared-id', { title: 'Bob’s' }), product('bob-only')])
    expect((await all(alice)).map((p) => p.title)).toEqual(['Alice’s'])
    expect((await all(bob)).map((p) => p.product_id).sort()).toEqual(['bob-only', 'shared-id'])
    expect((await s.api('GET', '/api/products/bob-only', alice)).status).toBe(404)
    expect((await s.api('GET', '/api/products/shared-id', alice)).body.title).toBe('Alice’s')
  })
})

it('a shop id with a slash or other URL characters is read back URL-encoded', async () => {
  const { token } = await s.tokenFor(['products:sync'])
  const id = 'shoes/red?size=42#1'
  expect((await batch(token, [product(id)])).status).toBe(200)
  const one = await s.api('GET', `/api/products/${encodeURIComponent(id)}`, token)
  expect(one.status).toBe(200)
  expect(one.body.product_id).toBe(id)
})

describe('full sync', () => {
  it('marks what a completed run did not name unavailable, never deletes, and completes once', async () => {
    const { token } = await s.tokenFor(['products:sync'])
    s.clock.set(new Date('2026-06-01T08:00:00.000Z'))
    await batch(token, [
      product('keep'),
      product('gone'),
      product('already', { availability: 'unavailable' }),
    ])

    s.clock.set(new Date('2026-06-02T08:00:00.000Z'))
    const run = await s.api('POST', '/api/products/sync-runs', token)
    expect(run.status).toBe(201)
    expect(run.body).toMatchObject({ status: 'open', completed_at: null, marked_unavailable: null })
    const runId = String(run.body.id)
    // Named by the run but unchanged: still unchanged.
    const named = await batch(token, [product('keep'), product('new')], { sync_run_id: runId })
    expect(named.body).toEqual({ received: 2, created: 1, updated: 0, unchanged: 1 })

    s.clock.set(new Date('2026-06-02T09:00:00.000Z'))
    const done = await s.api('POST', `/api/products/sync-runs/${runId}/complete`, token)
    expect(done.status).toBe(200)
    expect(done.body).toMatchObject({
      status: 'completed',
      marked_unavailable: 1,
      completed_at: '2026-06-02T09:00:00.000Z',
    })
    const listed = Object.fromEntries((await all(token)).map((p) => [p.product_id, p]))
    expect(Object.keys(listed).sort()).toEqual(['already', 'gone', 'keep', 'new'])
    expect(listed.gone).toMatchObject({ availability: 'unavailable', updated_at: '2026-06-02T09:00:00.000Z' })
    expect(listed.keep).toMatchObject({ availability: 'in_stock', updated_at: '2026-06-01T08:00:00.000Z' })
    expect(listed.already!.updated_at).toBe('2026-06-01T08:00:00.000Z')

    // Completing again answers the same and changes nothing; the run takes no more batches.
    const again = await s.api('POST', `/api/products/sync-runs/${runId}/complete`, token)
    expect(again.body).toEqual(done.body)
    const late = await batch(token, [product('keep')], { sync_run_id: runId })
    expect(late.status).toBe(409)
    expect(late.body).toMatchObject({ code: 'sync_run_completed', field: '/sync_run_id' })
    expect((await s.api('GET', `/api/products/sync-runs/${runId}`, token)).body).toEqual(done.body)

    // A product a later batch names again is available again.
    await batch(token, [product('gone')])
    expect((await s.api('GET', '/api/products/gone', token)).body.availability).toBe('in_stock')
  })

  it('a run of another user, or none, is refused', async () => {
    const { token } = await s.tokenFor(['products:sync'])
    const other = await s.api('POST', '/api/products/sync-runs', shop)
    const res = await batch(token, [product('x')], { sync_run_id: String(other.body.id) })
    expect(res.status).toBe(422)
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(res.body).toMatchObject({ status: 422, code: 'unknown_sync_run', field: '/sync_run_id' })
    expect(
      (await s.api('POST', `/api/products/sync-runs/${String(other.body.id)}/complete`, token)).status,
    ).toBe(404)
    expect((await s.api('GET', '/api/products/sync-runs/not-a-uuid', token)).status).toBe(404)
    expect((await all(token)).length).toBe(0)
  })
})

describe('listing with updated_since and a cursor', () => {
  it('pages through (updated_at, id) order with a stable cursor, from updated_since on', async () => {
    const { token } = await s.tokenFor(['products:sync'])
    s.clock.set(new Date('2026-07-01T00:00:00.000Z'))
    await batch(
      token,
      Array.from({ length: 5 }, (_, i) => product(`early-${i}`)),
    )
    s.clock.set(new Date('2026-07-02T00:00:00.000Z'))
    await batch(
      token,
      Array.from({ length: 5 }, (_, i) => product(`late-${i}`)),
    )

    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const query: string = `/api/products?limit=3${cursor ? `&cursor=${cursor}` : ''}`
      const page = await s.api('GET', query, token)
      expect(page.status).toBe(200)
      seen.push(...(page.body.products as { product_id: string }[]).map((p) => p.product_id))
      cursor = page.body.next_cursor as string | null
      pages++
      if (pages === 2) {
        // A product changed while paging moves to the end: it is seen again, nothing is skipped.
        s.clock.set(new Date('2026-07-03T00:00:00.000Z'))
        await batch(token, [product('early-0', { title: 'changed' })])
      }
    } while (cursor)
    expect(new Set(seen).size).toBe(10)
    expect(seen.at(-1)).toBe('early-0')
    expect(seen.filter((id) => id === 'early-0').length).toBe(2)

    const since = await s.api('GET', '/api/products?updated_since=2026-07-02T00:00:00Z', token)
    const sinceIds = (since.body.products as { product_id: string }[]).map((p) => p.product_id)
    expect(sinceIds.slice(0, 5).sort()).toEqual(Array.from({ length: 5 }, (_, i) => `late-${i}`))
    expect(sinceIds.slice(5)).toEqual(['early-0'])
    const sinceLater = await s.api('GET', '/api/products?updated_since=2026-07-02T12:00:00%2B02:00', token)
    expect((sinceLater.body.products as { product_id: string }[]).map((p) => p.product_id)).toEqual([
      'early-0',
    ])
    const unavailable = await s.api('GET', '/api/products?availability=unavailable', token)
    expect(unavailable.body).toEqual({ products: [], next_cursor: null })
  })
})
