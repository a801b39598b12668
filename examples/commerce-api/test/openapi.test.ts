import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commerceOpenApiDocument } from '../src/openapi.js'
import {
  checkResponse,
  createValidator,
  documentedOperations,
  type OpenApiDocument,
  registeredRoutes,
} from '../../../test/helpers/openapi.js'
import { type CommerceStack, startCommerceStack } from './stack.js'

/**
 * The commerce API's OpenAPI document: served at /openapi.json, naming every route, checked against
 * the API's real answers (status, media type, body schema), and passing Redocly's recommended rules.
 */
let s: CommerceStack
let doc: OpenApiDocument
const ajv = createValidator()
const dir = mkdtempSync(join(tmpdir(), 'commerce-openapi-'))
beforeAll(async () => {
  s = await startCommerceStack()
  doc = (await (await fetch(`${s.base}/openapi.json`)).json()) as OpenApiDocument
})
afterAll(async () => {
  await s?.close()
  rmSync(dir, { recursive: true, force: true })
})

const METADATA = ['GET /.well-known/oauth-protected-resource/api']

it('documents every route the app serves, and nothing else', () => {
  expect(documentedOperations(doc).sort()).toEqual(
    registeredRoutes(s.app)
      .filter((r) => !METADATA.includes(r))
      .sort(),
  )
})

describe('answers match the document', () => {
  const problems: string[] = []
  afterAll(() => expect(problems).toEqual([]))

  async function check(operation: string, url: string, token: string | undefined, payload?: unknown) {
    const [method] = operation.split(' ') as [string]
    const res: LightMyRequestResponse = await s.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    })
    problems.push(...checkResponse(doc, ajv, operation, res))
    return res
  }

  it('for successes and failures of every operation', async () => {
    const token = (await s.tokenFor(['ecommerce:write', 'products:sync'])).token
    const syncOnly = (await s.tokenFor(['products:sync'])).token
    const product = {
      product_id: 'sku-1',
      title: 'Shoes',
      url: 'https://shop.example/p/1',
      price: '10.00',
      currency: 'EUR',
      availability: 'in_stock',
      image_url: 'https://cdn.shop.example/1.jpg',
    }
    await check('POST /api/products/batch', '/api/products/batch', token, { products: [product] })
    await check('POST /api/products/batch', '/api/products/batch', token, {
      products: [{ ...product, price: 1 }],
    })
    await check('POST /api/products/batch', '/api/products/batch', undefined, { products: [product] })
    await check('GET /api/products', '/api/products?limit=1', token)
    await check('GET /api/products', '/api/products?limit=0', token)
    await check('GET /api/products/{product_id}', '/api/products/sku-1', token)
    await check('GET /api/products/{product_id}', '/api/products/none', token)
    const run = await check('POST /api/products/sync-runs', '/api/products/sync-runs', token)
    const runId = String(run.json().id)
    await check('POST /api/products/batch', '/api/products/batch', token, {
      products: [product],
      sync_run_id: '00000000-0000-4000-8000-000000000000',
    })
    await check('GET /api/products/sync-runs/{id}', `/api/products/sync-runs/${runId}`, token)
    await check(
      'POST /api/products/sync-runs/{id}/complete',
      `/api/products/sync-runs/${runId}/complete`,
      token,
    )
    await check('POST /api/products/batch', '/api/products/batch', token, {
      products: [product],
      sync_run_id: runId,
    })
    await check('GET /api/products/sync-runs/{id}', '/api/products/sync-runs/nope', token)

    const link = await check('POST /api/links', '/api/links', token, {
      product_id: 'sku-1',
      slug: 'shoes',
      campaign: 'c1',
    })
    await check('POST /api/links', '/api/links', token, { product_id: 'sku-1', slug: 'shoes' })
    await check('POST /api/links', '/api/links', token, { product_id: 'unknown' })
    await check('POST /api/links', '/api/links', syncOnly, { product_id: 'sku-1' })
    await check('GET /api/links', '/api/links', token)
    await check('PATCH /api/links/{id}', `/api/links/${String(link.json().id)}`, token, {
      utm: { term: 'x' },
    })
    await check('PATCH /api/links/{id}', `/api/links/${String(link.json().id)}`, token, { slug: 'other' })
    await check('PATCH /api/links/{id}', '/api/links/00000000-0000-4000-8000-000000000000', token, {
      campaign: null,
    })
    await check('GET /api/links/{id}', `/api/links/${String(link.json().id)}`, token)
    await check('GET /api/links/{id}', '/api/links/00000000-0000-4000-8000-000000000000', token)
    const hop = await check('GET /{slug}', '/shoes', undefined)
    await check('GET /{slug}', '/nothing-here', undefined)
    const clickId = new URL(String(hop.headers.location)).searchParams.get('lclid')!
    const conversion = { click_id: clickId, order_id: 'o1', value: '10.00', currency: 'EUR' }
    await check('POST /api/conversions', '/api/conversions', token, conversion)
    await check('POST /api/conversions', '/api/conversions', token, conversion)
    await check('POST /api/conversions', '/api/conversions', token, { ...conversion, value: '11.00' })
    await check('POST /api/conversions', '/api/conversions', token, {
      ...conversion,
      click_id: 'B'.repeat(22),
    })
    await check('GET /api/conversions/{order_id}', '/api/conversions/o1', token)
    await check('GET /api/conversions/{order_id}', '/api/conversions/o2', token)
    await check('GET /api/links/{id}/stats', `/api/links/${String(link.json().id)}/stats`, token)
    await check('GET /api/links/{id}/stats', `/api/links/${String(link.json().id)}/stats?from=x`, token)
    await check('GET /api/campaigns', '/api/campaigns', token)
    await check('GET /api/campaigns/{campaign}/stats', '/api/campaigns/c1/stats', token)
    await check('GET /api/campaigns/{campaign}/stats', '/api/campaigns/none/stats', token)
    await check('PATCH /api/links/{id}', `/api/links/${String(link.json().id)}`, token, { archived: true })
    await check('GET /api/links', '/api/links?state=archived', token)
    await check('GET /api/links', '/api/links?state=gone', token)
    await check('GET /{slug}', '/shoes', undefined)
    await check('GET /openapi.json', '/openapi.json', undefined)
    await check('GET /healthz', '/healthz', undefined)
    await check('GET /readyz', '/readyz', undefined)
  })
})

it('passes Redocly’s recommended rules (scripts/lint-openapi.ts)', () => {
  const file = join(dir, 'commerce.openapi.json')
  writeFileSync(
    file,
    JSON.stringify(
      commerceOpenApiDocument({
        publicUrl: 'http://localhost:3003',
        resource: 'http://localhost:3003/api',
        issuer: 'http://localhost:3000',
      }),
    ),
  )
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/lint-openapi.ts', file], {
    encoding: 'utf8',
  })
  expect(run.status, `${run.stdout}${run.stderr}`).toBe(0)
})
