import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CommerceStack, startCommerceStack } from './stack.js'

/** E-commerce links, their redirects with click ids, conversions and statistics, over real HTTP. */
let s: CommerceStack
let alice: string
beforeAll(async () => {
  s = await startCommerceStack()
  alice = (await s.tokenFor(['ecommerce:write', 'products:sync'])).token
  await s.api('POST', '/api/products/batch', alice, {
    products: [
      {
        product_id: 'sku-1',
        title: 'Red shoes',
        url: 'https://shop.example/p/red-shoes?ref=x',
        price: '59.90',
        currency: 'EUR',
        availability: 'in_stock',
      },
    ],
  })
})
afterAll(async () => s?.close())

/** Follows a short URL as a visitor: the 302's Location, parsed. */
async function click(slug: string) {
  const res = await s.api('GET', `/${slug}`, undefined)
  expect(res.status).toBe(302)
  expect(res.headers.get('cache-control')).toBe('no-store')
  return new URL(res.headers.get('location')!)
}

const conversion = (clickId: string, orderId: string, extra: Record<string, unknown> = {}) => ({
  click_id: clickId,
  order_id: orderId,
  value: '59.90',
  currency: 'EUR',
  occurred_at: '2026-05-01T12:00:00Z',
  ...extra,
})

describe('e-commerce links and their redirect', () => {
  it('a link to a catalogue product redirects to its current URL with UTM values and a fresh click id', async () => {
    const created = await s.api('POST', '/api/links', alice, {
      product_id: 'sku-1',
      slug: 'Red-Shoes',
      campaign: 'spring-sale',
      utm: { source: 'newsletter', medium: 'email' },
    })
    expect(created.status).toBe(201)
    expect(created.headers.get('location')).toBe(`/api/links/${String(created.body.id)}`)
    expect(created.body).toMatchObject({
      slug: 'Red-Shoes',
      short_url: `${s.base}/Red-Shoes`,
      product_id: 'sku-1',
      target_url: 'https://shop.example/p/red-shoes?ref=x',
      campaign: 'spring-sale',
      // The campaign name is the UTM campaign unless one is given.
      utm: { source: 'newsletter', medium: 'email', campaign: 'spring-sale', term: null, content: null },
      clicks: 0,
    })

    const first = await click('red-shoes')
    expect(first.origin + first.pathname).toBe('https://shop.example/p/red-shoes')
    expect(Object.fromEntries(first.searchParams)).toEqual({
      ref: 'x',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'spring-sale',
      lclid: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    })
    const second = await click('Red-Shoes')
    expect(second.searchParams.get('lclid')).not.toBe(first.searchParams.get('lclid'))
    // HEAD: the same target without a click id, and nothing counted.
    const head = await s.api('HEAD', '/Red-Shoes', undefined)
    expect(head.status).toBe(302)
    expect(new URL(head.headers.get('location')!).searchParams.has('lclid')).toBe(false)
    expect((await s.api('GET', `/api/links/${String(created.body.id)}`, alice)).body.clicks).toBe(2)

    // The product moves: the link follows it.
    await s.api('POST', '/api/products/batch', alice, {
      products: [
        {
          product_id: 'sku-1',
          title: 'Red shoes',
          url: 'https://shop.example/p/red-shoes-2',
          price: '59.90',
          currency: 'EUR',
          availability: 'in_stock',
        },
      ],
    })
    expect((await click('red-shoes')).pathname).toBe('/p/red-shoes-2')
  })

  it('a link to any product URL; only http(s) targets, never this service, never credentials', async () => {
    const ok = await s.api('POST', '/api/links', alice, { target_url: 'https://other.example/item/9' })
    expect(ok.status).toBe(201)
    expect(String(ok.body.slug)).toMatch(/^[a-z2-9]{8}$/)
    expect(ok.body.product_id).toBeNull()
    expect((await click(String(ok.body.slug))).searchParams.has('lclid')).toBe(true)
    for (const [target, message] of [
      ['javascript:alert(1)', 'target_url: must be an http or https URL'],
      ['data:text/html,hi', 'target_url: must be an http or https URL'],
      ['//evil.example/', 'target_url: must be an absolute URL such as https://example.com/page'],
      ['https://u:p@shop.example/', 'target_url: must not contain a user name or password'],
      [`${s.base}/loop`, 'target_url: must not point at this short-link service'],
    ]) {
      const res = await s.api('POST', '/api/links', alice, { target_url: target })
      expect(res.status, target).toBe(400)
      expect(res.body).toMatchObject({ detail: message, field: '/target_url', code: 'invalid_request' })
    }
    const both = await s.api('POST', '/api/links', alice, {
      target_url: 'https://a.example/',
      product_id: 'sku-1',
    })
    expect(both.body).toMatchObject({ status: 400, field: '/product_id' })
    const neither = await s.api('POST', '/api/links', alice, { campaign: 'x' })
    expect(neither.body).toMatchObject({ status: 400, field: '/target_url' })
  })

  it('a product of another user’s catalogue is unknown (422), a taken slug 409, someone else’s link 404', async () => {
    const bob = (await s.tokenFor(['ecommerce:write', 'products:sync'])).token
    const res = await s.api('POST', '/api/links', bob, { product_id: 'sku-1' })
    expect(res.status).toBe(422)
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(res.body).toMatchObject({ code: 'unknown_product', field: '/product_id', status: 422 })
    const taken = await s.api('POST', '/api/links', bob, {
      target_url: 'https://b.example/',
      slug: 'RED-SHOES',
    })
    expect(taken.status).toBe(409)
    expect(taken.body).toMatchObject({ code: 'slug_taken', field: '/slug' })
    const mine = (await s.api('GET', '/api/links', alice)).body.links as { id: string }[]
    expect(mine.length).toBeGreaterThan(0)
    expect((await s.api('GET', `/api/links/${mine[0]!.id}`, bob)).status).toBe(404)
    expect((await s.api('GET', `/api/links/${mine[0]!.id}/stats`, bob)).status).toBe(404)
    expect((await s.api('GET', '/api/links', bob)).body).toEqual({ links: [], next_cursor: null })
    expect((await s.api('GET', '/api/campaigns/spring-sale/stats', bob)).status).toBe(404)
  })

  it('lists newest first, by campaign, in pages', async () => {
    const { token } = await s.tokenFor(['ecommerce:write'])
    const ids: string[] = []
    for (const campaign of ['a', 'b', 'a'])
      ids.push(
        String(
          (await s.api('POST', '/api/links', token, { target_url: 'https://x.example/', campaign })).body.id,
        ),
      )
    const page = await s.api('GET', '/api/links?limit=2', token)
    expect((page.body.links as { id: string }[]).map((l) => l.id)).toEqual([ids[2], ids[1]])
    const next = await s.api('GET', `/api/links?limit=2&cursor=${String(page.body.next_cursor)}`, token)
    expect((next.body.links as { id: string }[]).map((l) => l.id)).toEqual([ids[0]])
    expect(next.body.next_cursor).toBeNull()
    const a = await s.api('GET', '/api/links?campaign=a', token)
    expect((a.body.links as { id: string }[]).map((l) => l.id)).toEqual([ids[2], ids[0]])
    expect((await s.api('GET', '/api/campaigns', token)).body).toEqual({
      campaigns: [
        { campaign: 'a', links: 2 },
        { campaign: 'b', links: 1 },
      ],
    })
  })

  it('PATCH changes the campaign and UTM values (null clears one); the redirect follows; others get 404', async () => {
    const link = await s.api('POST', '/api/links', alice, {
      target_url: 'https://shop.example/edit',
      campaign: 'typo-campain',
      utm: { source: 'newsleter', term: 'shoes' },
    })
    const id = String(link.body.id)
    const changed = await s.api('PATCH', `/api/links/${id}`, alice, {
      campaign: 'typo-campaign',
      utm: { source: 'newsletter', campaign: 'typo-campaign', term: null },
    })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({
      slug: link.body.slug,
      target_url: 'https://shop.example/edit',
      campaign: 'typo-campaign',
      utm: { source: 'newsletter', medium: null, campaign: 'typo-campaign', term: null, content: null },
    })
    expect(Object.fromEntries((await click(String(link.body.slug))).searchParams)).toEqual({
      utm_source: 'newsletter',
      utm_campaign: 'typo-campaign',
      lclid: expect.any(String),
    })
    const bob = (await s.tokenFor(['ecommerce:write'])).token
    expect((await s.api('PATCH', `/api/links/${id}`, bob, { campaign: 'mine' })).status).toBe(404)
    expect(
      (await s.api('PATCH', `/api/links/${id}`, alice, { target_url: 'https://evil.example/' })).body,
    ).toMatchObject({
      status: 400,
      field: '/target_url',
      detail: 'unknown parameter: target_url',
    })
    expect((await s.api('PATCH', `/api/links/${id}`, alice, {})).body).toMatchObject({
      status: 400,
      detail: 'name campaign, utm or archived to change',
    })
  })

  it('archiving ends the short URL (410 page, nothing counted) and keeps the slug, the history and late conversions', async () => {
    const link = await s.api('POST', '/api/links', alice, {
      target_url: 'https://shop.example/ending',
      campaign: 'summer-end',
    })
    const id = String(link.body.id)
    const slug = String(link.body.slug)
    const clickId = (await click(slug)).searchParams.get('lclid')!
    expect(link.body.archived_at).toBeNull()

    const archived = await s.api('PATCH', `/api/links/${id}`, alice, { archived: true })
    expect(archived.status).toBe(200)
    expect(archived.body).toMatchObject({ id, clicks: 1, archived_at: s.clock.now().toISOString() })
    for (const method of ['GET', 'HEAD']) {
      const gone = await s.api(method, `/${slug.toUpperCase()}`, undefined)
      expect(gone.status, method).toBe(410)
      expect(gone.headers.get('location')).toBeNull()
      expect(gone.headers.get('content-type')).toMatch(/^text\/html/)
    }
    // Nothing counted; archiving twice keeps the first time.
    const first = archived.body.archived_at
    s.clock.advance(60_000)
    const again = await s.api('PATCH', `/api/links/${id}`, alice, { archived: true })
    expect(again.body).toMatchObject({ clicks: 1, archived_at: first })
    // The slug stays taken: a printed URL never leads somewhere new.
    const taken = await s.api('POST', '/api/links', alice, { target_url: 'https://shop.example/x', slug })
    expect(taken.status).toBe(409)
    // An order placed after the click is still reported after the archive, and counts.
    const late = await s.api('POST', '/api/conversions', alice, conversion(clickId, `late-${id}`))
    expect(late.status).toBe(201)
    const stats = await s.api('GET', `/api/links/${id}/stats?from=2026-01-01&to=2026-12-31`, alice)
    expect(stats.body).toMatchObject({ clicks: 1, conversions: 1 })

    // Listing: active links by default, archived ones on request, both with state=all.
    const ids = async (query: string) =>
      (
        (await s.api('GET', `/api/links?campaign=summer-end${query}`, alice)).body.links as { id: string }[]
      ).map((l) => l.id)
    expect(await ids('')).toEqual([])
    expect(await ids('&state=archived')).toEqual([id])
    expect(await ids('&state=all')).toEqual([id])
    expect((await s.api('GET', '/api/links?state=deleted', alice)).body).toMatchObject({
      status: 400,
      field: 'state',
    })
    expect((await s.api('PATCH', `/api/links/${id}`, alice, { archived: 'yes' })).body).toMatchObject({
      status: 400,
      field: '/archived',
    })
    const bob = (await s.tokenFor(['ecommerce:write'])).token
    expect((await s.api('PATCH', `/api/links/${id}`, bob, { archived: false })).status).toBe(404)

    // Brought back: it redirects and counts again.
    const back = await s.api('PATCH', `/api/links/${id}`, alice, { archived: false })
    expect(back.body).toMatchObject({ archived_at: null })
    await click(slug)
    expect((await s.api('GET', `/api/links/${id}`, alice)).body.clicks).toBe(2)
  })

  it('concurrent clicks are each recorded, each with its own click id', async () => {
    const link = await s.api('POST', '/api/links', alice, { target_url: 'https://busy.example/' })
    const hops = await Promise.all(Array.from({ length: 20 }, () => click(String(link.body.slug))))
    expect(new Set(hops.map((h) => h.searchParams.get('lclid'))).size).toBe(20)
    expect((await s.api('GET', `/api/links/${String(link.body.id)}`, alice)).body.clicks).toBe(20)
  })

  it('an unknown short URL is a 404 page, not a redirect', async () => {
    for (const path of ['/nosuchlink', '/a.b', `/${'x'.repeat(300)}`]) {
      const res = await s.api('GET', path, undefined)
      expect(res.status, path).toBe(404)
      expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    }
  })
})

describe('conversions', () => {
  let linkId: string
  let clickId: string
  beforeAll(async () => {
    const link = await s.api('POST', '/api/links', alice, {
      target_url: 'https://shop.example/c',
      campaign: 'conv',
    })
    linkId = String(link.body.id)
    clickId = (await click(String(link.body.slug))).searchParams.get('lclid')!
  })

  it('records one, answers the same report again with the same body (200), and 409 for other values', async () => {
    const first = await s.api('POST', '/api/conversions', alice, conversion(clickId, 'order-1'))
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({
      order_id: 'order-1',
      click_id: clickId,
      link_id: linkId,
      value: '59.90',
      value_minor: 5990,
      currency: 'EUR',
      occurred_at: '2026-05-01T12:00:00.000Z',
    })
    const again = await s.api('POST', '/api/conversions', alice, conversion(clickId, 'order-1'))
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    // The same amount in minor units, and no time (the first one's is kept): the same report.
    const sameOtherWay = await s.api('POST', '/api/conversions', alice, {
      click_id: clickId,
      order_id: 'order-1',
      value_minor: 5990,
      currency: 'EUR',
    })
    expect(sameOtherWay.status).toBe(200)
    expect(sameOtherWay.body).toEqual(first.body)

    for (const [change, named] of [
      [{ value: '60.00' }, 'value'],
      [{ currency: 'USD' }, 'currency'],
      [{ occurred_at: '2026-05-02T12:00:00Z' }, 'occurred_at'],
    ] as const) {
      const conflict = await s.api('POST', '/api/conversions', alice, conversion(clickId, 'order-1', change))
      expect(conflict.status).toBe(409)
      expect(conflict.body).toMatchObject({ code: 'conversion_conflict', field: '/order_id' })
      expect(String(conflict.body.detail)).toContain(named)
    }
    expect((await s.api('GET', '/api/conversions/order-1', alice)).body).toEqual(first.body)
  })

  it('an unknown click id, or a click on another user’s link, is refused with 422 unknown_click', async () => {
    const bob = (await s.tokenFor(['ecommerce:write'])).token
    const unknown = await s.api('POST', '/api/conversions', alice, conversion('A'.repeat(22), 'order-x'))
    expect(unknown.status).toBe(422)
    expect(unknown.body).toMatchObject({ code: 'unknown_click', field: '/click_id' })
    const others = await s.api('POST', '/api/conversions', bob, conversion(clickId, 'order-x'))
    expect(others.status).toBe(422)
    expect(others.body).toEqual(unknown.body)
    expect((await s.api('GET', '/api/conversions/order-1', bob)).status).toBe(404)
    // Bob's order ids are his own: the same order id is a new conversion for him.
    const bobLink = await s.api('POST', '/api/links', bob, { target_url: 'https://bob.example/' })
    const bobClick = (await click(String(bobLink.body.slug))).searchParams.get('lclid')!
    expect((await s.api('POST', '/api/conversions', bob, conversion(bobClick, 'order-1'))).status).toBe(201)
  })

  it('the same report sent many times at once is recorded once: one 201, the others 200', async () => {
    const report = conversion(clickId, 'order-race')
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => s.api('POST', '/api/conversions', alice, report)),
    )
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201])
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
  })

  it('a time in the future and amounts as floats are refused', async () => {
    const future = await s.api(
      'POST',
      '/api/conversions',
      alice,
      conversion(clickId, 'f', { occurred_at: '2999-01-01T00:00:00Z' }),
    )
    expect(future.body).toMatchObject({ status: 400, field: '/occurred_at' })
    const float = await s.api('POST', '/api/conversions', alice, conversion(clickId, 'f', { value: 59.9 }))
    expect(float.body).toMatchObject({ status: 400, field: '/value' })
    expect(String(float.body.detail)).toContain('never a JSON number')
    const fractionMinor = await s.api(
      'POST',
      '/api/conversions',
      alice,
      conversion(clickId, 'f', { value: undefined, value_minor: 59.9 }),
    )
    expect(fractionMinor.body).toMatchObject({ status: 400, field: '/value_minor' })
    expect((await s.api('GET', '/api/conversions/f', alice)).status).toBe(404)
  })
})

describe('statistics', () => {
  it('per link and per campaign: clicks, conversions, rate and revenue per currency, by UTC day', async () => {
    const { token } = await s.tokenFor(['ecommerce:write'])
    const newLink = async (campaign: string) => {
      const link = await s.api('POST', '/api/links', token, {
        target_url: 'https://stats.example/',
        campaign,
      })
      return { id: String(link.body.id), slug: String(link.body.slug) }
    }
    const one = await newLink('summer')
    const two = await newLink('summer')
    const other = await newLink('winter')
    const clicksOn = async (slug: string, n: number) => {
      const ids: string[] = []
      for (let i = 0; i < n; i++) ids.push((await click(slug)).searchParams.get('lclid')!)
      return ids
    }
    // Day 1 (UTC, late evening): 3 clicks on one, 1 on two. Day 2: 1 more click on one.
    s.clock.set(new Date('2026-08-01T23:30:00.000Z'))
    const c1 = await clicksOn(one.slug, 3)
    const c2 = await clicksOn(two.slug, 1)
    await clicksOn(other.slug, 2)
    s.clock.set(new Date('2026-08-02T00:30:00.000Z'))
    await clicksOn(one.slug, 1)
    s.clock.set(new Date('2026-08-02T12:00:00.000Z'))
    // Conversions: in EUR and JPY on link one (one on day 2 by its time with offset), EUR on two.
    const report = (clickId: string, orderId: string, value: string, currency: string, at: string) =>
      s.api('POST', '/api/conversions', token, {
        click_id: clickId,
        order_id: orderId,
        value,
        currency,
        occurred_at: at,
      })
    expect((await report(c1[0]!, 'o1', '10.10', 'EUR', '2026-08-01T23:40:00Z')).status).toBe(201)
    expect((await report(c1[1]!, 'o2', '0.20', 'EUR', '2026-08-02T01:40:00+02:00')).status).toBe(201) // = 23:40Z day 1
    expect((await report(c1[2]!, 'o3', '1500', 'JPY', '2026-08-02T09:00:00Z')).status).toBe(201)
    expect((await report(c2[0]!, 'o4', '99.99', 'EUR', '2026-08-02T10:00:00Z')).status).toBe(201)

    const linkStats = await s.api('GET', `/api/links/${one.id}/stats?from=2026-08-01&to=2026-08-03`, token)
    expect(linkStats.status).toBe(200)
    expect(linkStats.body).toEqual({
      link_id: one.id,
      campaign: 'summer',
      from: '2026-08-01',
      to: '2026-08-03',
      clicks: 4,
      conversions: 3,
      conversion_rate: 0.75,
      revenue: [
        { currency: 'EUR', value_minor: '1030', value: '10.30' },
        { currency: 'JPY', value_minor: '1500', value: '1500' },
      ],
      days: [
        {
          date: '2026-08-01',
          clicks: 3,
          conversions: 2,
          revenue: [{ currency: 'EUR', value_minor: '1030', value: '10.30' }],
        },
        {
          date: '2026-08-02',
          clicks: 1,
          conversions: 1,
          revenue: [{ currency: 'JPY', value_minor: '1500', value: '1500' }],
        },
        { date: '2026-08-03', clicks: 0, conversions: 0, revenue: [] },
      ],
    })

    const campaign = await s.api('GET', '/api/campaigns/summer/stats?from=2026-08-01&to=2026-08-02', token)
    expect(campaign.body).toMatchObject({
      campaign: 'summer',
      links: 2,
      clicks: 5,
      conversions: 4,
      conversion_rate: 0.8,
      revenue: [
        { currency: 'EUR', value_minor: '11029', value: '110.29' },
        { currency: 'JPY', value_minor: '1500', value: '1500' },
      ],
    })
    const winter = await s.api('GET', '/api/campaigns/winter/stats?from=2026-08-01&to=2026-08-01', token)
    expect(winter.body).toMatchObject({ clicks: 2, conversions: 0, conversion_rate: 0, revenue: [] })
    // Out of range: nothing, and no rate without clicks.
    const empty = await s.api('GET', `/api/links/${one.id}/stats?from=2026-07-01&to=2026-07-31`, token)
    expect(empty.body).toMatchObject({ clicks: 0, conversions: 0, conversion_rate: null, revenue: [] })
    expect(empty.body.days).toHaveLength(31)
    // The default range: the 30 days up to today (the API's clock).
    const month = await s.api('GET', `/api/links/${one.id}/stats`, token)
    expect(month.body).toMatchObject({ from: '2026-07-04', to: '2026-08-02', clicks: 4 })
    // Reading needs the same scope as writing.
    const syncOnly = (await s.tokenFor(['products:sync'])).token
    expect((await s.api('GET', `/api/links/${one.id}/stats`, syncOnly)).status).toBe(403)
  })

  it('many clicks and conversions add up in minor units, beyond what a float holds exactly', async () => {
    const { token } = await s.tokenFor(['ecommerce:write'])
    s.clock.set(new Date('2026-09-01T12:00:00.000Z'))
    const link = await s.api('POST', '/api/links', token, { target_url: 'https://big.example/' })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await click(String(link.body.slug))).searchParams.get('lclid')!)
    // 3 × 9,007,199,254,740.99 USD: more minor units than Number.MAX_SAFE_INTEGER.
    for (const [i, id] of ids.entries())
      await s.api('POST', '/api/conversions', token, {
        click_id: id,
        order_id: `big-${i}`,
        value: '9007199254740.99',
        currency: 'USD',
        occurred_at: '2026-09-01T12:00:00Z',
      })
    const stats = await s.api(
      'GET',
      `/api/links/${String(link.body.id)}/stats?from=2026-09-01&to=2026-09-01`,
      token,
    )
    expect(stats.body.revenue).toEqual([
      { currency: 'USD', value_minor: '2702159776422297', value: '27021597764222.97' },
    ])
    expect(stats.body.conversion_rate).toBe(1)
  })
})
