import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CommerceConfigError, commerceConfigSchema, loadCommerceConfig } from '../src/config.js'
import { tableAfter } from '../../../test/helpers/markdown.js'

const credentials = { COMMERCE_RESOURCE_SERVER_ID: 'rs_abc', COMMERCE_RESOURCE_SERVER_SECRET: 's3cret-value' }

describe('the commerce API configuration', () => {
  it('has defaults that sit beside a local linkauth and links API', () => {
    expect(loadCommerceConfig(credentials)).toEqual({
      port: 3003,
      host: '127.0.0.1',
      publicUrl: 'http://localhost:3003',
      databaseUrl: undefined,
      databasePoolSize: 10,
      dataDir: './.data/commerce-api',
      issuer: 'http://localhost:3000',
      resource: 'http://localhost:3003/api',
      resourceServer: { id: 'rs_abc', secret: 's3cret-value' },
      verification: 'local',
      introspectionCacheSeconds: 5,
      maxFeedStalenessSeconds: 10,
      logLevel: 'info',
      appLimits: { unverified: 50, vouched: 500, verified: null },
    })
    expect(
      loadCommerceConfig({
        ...credentials,
        COMMERCE_PUBLIC_URL: 'https://go.shop.example/',
        COMMERCE_API_RESOURCE: 'https://api.shop.example/commerce',
      }),
    ).toMatchObject({ publicUrl: 'https://go.shop.example', resource: 'https://api.shop.example/commerce' })
  })

  it('says how to get the credentials when they are missing, and never shows a secret', () => {
    expect(() => loadCommerceConfig({})).toThrow(
      /^COMMERCE_RESOURCE_SERVER_ID is not set: register the commerce API .*--resource .*--scope ecommerce:write --scope products:sync/,
    )
    let message = ''
    try {
      loadCommerceConfig({ ...credentials, COMMERCE_RESOURCE_SERVER_SECRET: 'x'.repeat(501) })
    } catch (err) {
      expect(err).toBeInstanceOf(CommerceConfigError)
      message = (err as Error).message
    }
    expect(message).toMatch(/^COMMERCE_RESOURCE_SERVER_SECRET: .*\(got \(hidden\)\)$/)
    expect(() => loadCommerceConfig({ ...credentials, COMMERCE_PORT: 'abc' })).toThrow(
      /^COMMERCE_PORT: .*\(got "abc"\)$/,
    )
    expect(() =>
      loadCommerceConfig({ ...credentials, COMMERCE_API_RESOURCE: 'http://shop.example/api' }),
    ).toThrow(/^COMMERCE_API_RESOURCE: an absolute https URI/)
    expect(() => loadCommerceConfig({ ...credentials, COMMERCE_DATABASE_URL: 'mysql://x' })).toThrow(
      /^COMMERCE_DATABASE_URL: a postgres:\/\/ connection URL/,
    )
  })

  it('examples/commerce-api/README.md documents exactly these variables', () => {
    const rows = tableAfter(readFileSync('examples/commerce-api/README.md', 'utf8'), '## Configuration')
    const names = rows.map((r) => /^`([A-Z_]+)`$/.exec(r[0]!)?.[1])
    expect(names.sort()).toEqual(Object.keys(commerceConfigSchema.shape).sort())
  })
})
