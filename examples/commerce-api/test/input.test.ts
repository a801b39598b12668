import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CommerceStack, startCommerceStack } from './stack.js'

/** Every bad input answers an RFC 9457 problem naming the field, never a 500; sizes are bounded. */
let s: CommerceStack
let token: string
let linkId: string
beforeAll(async () => {
  s = await startCommerceStack()
  token = (await s.tokenFor(['ecommerce:write', 'products:sync'])).token
  linkId = String((await s.api('POST', '/api/links', token, { target_url: 'https://x.example/' })).body.id)
})
afterAll(async () => s?.close())

const product = (extra: Record<string, unknown> = {}) => ({
  product_id: 'p1',
  title: 'A product',
  url: 'https://shop.example/p1',
  price: '19.99',
  currency: 'EUR',
  availability: 'in_stock',
  ...extra,
})
const batchOf = (extra: Record<string, unknown>) => ({ products: [product(extra)] })
const conversion = (extra: Record<string, unknown>) => ({
  click_id: 'A'.repeat(22),
  order_id: 'o-1',
  value: '1.00',
  currency: 'EUR',
  ...extra,
})

describe('bad input → 400 problem+json naming the field', () => {
  it.each([
    ['POST', '/api/products/batch', batchOf({ currency: 'eur' }), '/products/0/currency', /ISO 4217/],
    ['POST', '/api/products/batch', batchOf({ currency: 'ABC' }), '/products/0/currency', /ISO 4217/],
    ['POST', '/api/products/batch', batchOf({ currency: 'XAU' }), '/products/0/currency', /ISO 4217/],
    [
      'POST',
      '/api/products/batch',
      batchOf({ price: '19.999' }),
      '/products/0/price',
      'products.0.price: EUR has 2 decimals: "19.999" has more',
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ price: '19.5', currency: 'JPY' }),
      '/products/0/price',
      /JPY has no minor unit/,
    ],
    ['POST', '/api/products/batch', batchOf({ price: 19.99 }), '/products/0/price', /never a JSON number/],
    ['POST', '/api/products/batch', batchOf({ price: '-1.00' }), '/products/0/price', /decimal string/],
    ['POST', '/api/products/batch', batchOf({ price: '1e3' }), '/products/0/price', /decimal string/],
    [
      'POST',
      '/api/products/batch',
      batchOf({ price: undefined, price_minor: 1.5 }),
      '/products/0/price_minor',
      /whole number/,
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ price: undefined, price_minor: '1999' }),
      '/products/0/price_minor',
      /whole number/,
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ price: undefined, price_minor: -1 }),
      '/products/0/price_minor',
      /from 0/,
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ price: undefined, price_minor: 1e16 }),
      '/products/0/price_minor',
      /from 0/,
    ],
    ['POST', '/api/products/batch', batchOf({ price_minor: 1999 }), '/products/0/price_minor', /not both/],
    ['POST', '/api/products/batch', batchOf({ price: undefined }), '/products/0/price', /is required/],
    ['POST', '/api/products/batch', batchOf({ title: 'x'.repeat(501) }), '/products/0/title', /at most 500/],
    ['POST', '/api/products/batch', batchOf({ title: '  ' }), '/products/0/title', /empty/],
    ['POST', '/api/products/batch', batchOf({ product_id: 'a b' }), '/products/0/product_id', /spaces/],
    [
      'POST',
      '/api/products/batch',
      batchOf({ product_id: 'x'.repeat(201) }),
      '/products/0/product_id',
      /1 to 200/,
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ url: 'javascript:alert(1)' }),
      '/products/0/url',
      /http or https/,
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ image_url: 'ftp://cdn.example/x.jpg' }),
      '/products/0/image_url',
      /http or https/,
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ availability: 'maybe' }),
      '/products/0/availability',
      /must be one of/,
    ],
    [
      'POST',
      '/api/products/batch',
      batchOf({ colour: 'red' }),
      '/products/0/colour',
      'unknown parameter: colour',
    ],
    [
      'POST',
      '/api/products/batch',
      { products: [product(), product()] },
      '/products/1/product_id',
      /appears twice/,
    ],
    ['POST', '/api/products/batch', { products: [] }, '/products', /at least one/],
    ['POST', '/api/products/batch', { products: 'all' }, '/products', /list of products/],
    ['POST', '/api/products/batch', { products: [product()], sync_run_id: 'x' }, '/sync_run_id', /sync run/],
    ['POST', '/api/products/batch', [1], undefined, 'the body must be a JSON object'],
    ['GET', '/api/products?limit=0', undefined, 'limit', 'limit: must be from 1 to 1000'],
    ['GET', '/api/products?limit=1001', undefined, 'limit', 'limit: must be from 1 to 1000'],
    ['GET', '/api/products?cursor=bogus', undefined, 'cursor', /not a cursor of this API/],
    ['GET', '/api/products?updated_since=yesterday', undefined, 'updated_since', /RFC 3339/],
    ['GET', '/api/products?updated_since=2026-05-01T12:00:00', undefined, 'updated_since', /offset/],
    ['GET', '/api/products?page=2', undefined, 'page', 'unknown parameter: page'],
    ['POST', '/api/links', { target_url: 'https://a.example/', slug: 'api' }, '/slug', /reserved/],
    [
      'POST',
      '/api/links',
      { target_url: 'https://a.example/', campaign: 'c'.repeat(101) },
      '/campaign',
      /at most 100/,
    ],
    [
      'POST',
      '/api/links',
      { target_url: 'https://a.example/', utm: { source: 's'.repeat(201) } },
      '/utm/source',
      /at most 200/,
    ],
    [
      'POST',
      '/api/links',
      { target_url: 'https://a.example/', utm: { channel: 'x' } },
      '/utm/channel',
      'unknown parameter: channel',
    ],
    [
      'POST',
      '/api/links',
      { target_url: `https://a.example/${'a'.repeat(2048)}` },
      '/target_url',
      /at most 2048/,
    ],
    ['GET', '/api/links?limit=101', undefined, 'limit', 'limit: must be from 1 to 100'],
    ['POST', '/api/conversions', conversion({ click_id: 'short' }), '/click_id', /22 characters/],
    ['POST', '/api/conversions', conversion({ order_id: '' }), '/order_id', /1 to 200/],
    ['POST', '/api/conversions', conversion({ currency: undefined }), '/currency', /required/],
    ['POST', '/api/conversions', conversion({ value: '1.001' }), '/value', /EUR has 2 decimals/],
    [
      'POST',
      '/api/conversions',
      conversion({ occurred_at: '2026-13-01T00:00:00Z' }),
      '/occurred_at',
      /real time/,
    ],
  ] as const)('%s %s %j → %s', async (method, path, body, field, detail) => {
    const res = await s.api(method, path, token, body)
    expect(res.status, res.text).toBe(400)
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(res.body).toMatchObject({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      code: 'invalid_request',
    })
    expect(res.body.field).toBe(field)
    if (typeof detail === 'string') expect(res.body.detail).toBe(detail)
    else expect(res.body.detail).toMatch(detail)
  })

  it('stats ranges', async () => {
    const stats = (q: string) => s.api('GET', `/api/links/${linkId}/stats?${q}`, token)
    expect((await stats('from=2026-03-05&to=2026-03-01')).body).toMatchObject({ status: 400, field: 'from' })
    expect((await stats('from=2020-01-01&to=2026-01-01')).body).toMatchObject({
      field: 'to',
      detail: 'to: at most 366 days after from',
    })
    expect((await stats('from=2026-02-30')).body).toMatchObject({
      field: 'from',
      detail: 'from: must be a real calendar date',
    })
    const campaign = await s.api('GET', `/api/campaigns/${'c'.repeat(101)}/stats`, token)
    expect(campaign.body).toMatchObject({ status: 400, field: 'campaign' })
  })
})

describe('sizes are bounded', () => {
  it('at most 1,000 products a batch, 4 MiB a batch body, 16 KiB any other body; JSON only', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => product({ product_id: `p${i}` }))
    const tooMany = await s.api('POST', '/api/products/batch', token, { products: many })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body).toMatchObject({
      field: '/products',
      detail: 'products: at most 1000 products a request; send more requests',
    })
    const thousand = await s.api('POST', '/api/products/batch', token, { products: many.slice(0, 1000) })
    expect(thousand.status).toBe(200)
    expect(thousand.body).toMatchObject({ received: 1000, created: 1000 })

    const huge = await s.api('POST', '/api/products/batch', token, {
      products: [product({ title: 'x'.repeat(5 * 1024 * 1024) })],
    })
    expect(huge.status).toBe(413)
    expect(huge.body).toMatchObject({
      status: 413,
      code: 'invalid_request',
      detail: 'The request body is too large.',
    })
    const bigLink = await s.api('POST', '/api/links', token, {
      target_url: 'https://a.example/',
      pad: 'x'.repeat(20_000),
    })
    expect(bigLink.status).toBe(413)
    const form = await s.api('POST', '/api/conversions', token, 'click_id=x', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(form.status).toBe(415)
    expect(form.body).toMatchObject({ status: 415, detail: 'Send the body as application/json.' })
    const broken = await s.api('POST', '/api/links', token, '{"target_url":')
    expect(broken.body).toMatchObject({ status: 400, detail: 'The request body is not valid JSON.' })
    const nowhere = await s.api('GET', '/api/nothing-here', token)
    expect(nowhere.status).toBe(404)
    expect(nowhere.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  })
})
