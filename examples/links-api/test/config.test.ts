import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { LinksConfigError, linksConfigSchema, loadLinksConfig } from '../src/config.js'
import { tableAfter } from '../../../test/helpers/markdown.js'

const credentials = { LINKS_RESOURCE_SERVER_ID: 'rs_abc', LINKS_RESOURCE_SERVER_SECRET: 's3cret-value' }

describe('the links API configuration', () => {
  it('has defaults that sit beside a local linkauth', () => {
    expect(loadLinksConfig(credentials)).toEqual({
      port: 3002,
      host: '127.0.0.1',
      publicUrl: 'http://localhost:3002',
      databaseUrl: undefined,
      databasePoolSize: 10,
      dataDir: './.data/links-api',
      issuer: 'http://localhost:3000',
      resource: 'http://localhost:3002/api',
      resourceServer: { id: 'rs_abc', secret: 's3cret-value' },
      verification: 'local',
      introspectionCacheSeconds: 5,
      maxFeedStalenessSeconds: 10,
      imports: { maxBytes: 52_428_800, maxRows: 200_000, batchSize: 500 },
      appLimits: { unverified: 50, vouched: 500, verified: null },
      logLevel: 'info',
    })
    const custom = loadLinksConfig({
      ...credentials,
      LINKS_PORT: '4000',
      LINKAUTH_ISSUER: 'https://auth.example.com/',
      LINKS_PUBLIC_URL: 'https://sho.rt',
      LINKS_VERIFICATION: 'introspection',
      LINKS_INTROSPECTION_CACHE: '0',
    })
    expect(custom).toMatchObject({
      port: 4000,
      issuer: 'https://auth.example.com',
      resource: 'https://sho.rt/api',
      publicUrl: 'https://sho.rt',
      verification: 'introspection',
      introspectionCacheSeconds: 0,
    })
  })

  it('reads the limits on applications by standing: a number, none, or a refusal naming the variable', () => {
    expect(
      loadLinksConfig({
        ...credentials,
        LINKS_APP_LIMIT_UNVERIFIED: '0',
        LINKS_APP_LIMIT_VOUCHED: 'none',
        LINKS_APP_LIMIT_VERIFIED: '10000',
      }).appLimits,
    ).toEqual({ unverified: 0, vouched: null, verified: 10_000 })
    for (const bad of ['-1', 'lots', '1.5', '2000000'])
      expect(() => loadLinksConfig({ ...credentials, LINKS_APP_LIMIT_UNVERIFIED: bad })).toThrow(
        /LINKS_APP_LIMIT_UNVERIFIED/,
      )
  })

  it('takes its own resource identifier, and refuses the old LINKS_AUDIENCE rather than ignore it', () => {
    expect(
      loadLinksConfig({ ...credentials, LINKS_API_RESOURCE: 'https://api.example.com/links' }).resource,
    ).toBe('https://api.example.com/links')
    expect(() => loadLinksConfig({ ...credentials, LINKS_AUDIENCE: 'http://localhost:3000/api' })).toThrow(
      /^LINKS_AUDIENCE is no longer read: .*LINKS_API_RESOURCE/,
    )
  })

  it('says how to get the credentials when they are missing, and never shows a secret', () => {
    expect(() => loadLinksConfig({})).toThrow(
      /^LINKS_RESOURCE_SERVER_ID is not set: register the links API .*resource-servers create .*--resource .*--scope links:read/,
    )
    expect(() => loadLinksConfig({ LINKS_RESOURCE_SERVER_ID: 'rs_abc' })).toThrow(
      /^LINKS_RESOURCE_SERVER_SECRET is not set/,
    )
    const tooLong = 'x'.repeat(501)
    let message = ''
    try {
      loadLinksConfig({ ...credentials, LINKS_RESOURCE_SERVER_SECRET: tooLong })
    } catch (err) {
      expect(err).toBeInstanceOf(LinksConfigError)
      message = (err as Error).message
    }
    expect(message).toMatch(/^LINKS_RESOURCE_SERVER_SECRET: .*\(got \(hidden\)\)$/)
    expect(message).not.toContain(tooLong)
    expect(() => loadLinksConfig({ ...credentials, LINKS_PORT: 'abc' })).toThrow(
      /^LINKS_PORT: .*\(got "abc"\)$/,
    )
    expect(() => loadLinksConfig({ ...credentials, LINKAUTH_ISSUER: 'ftp://x' })).toThrow(
      /^LINKAUTH_ISSUER: /,
    )
    for (const resource of ['http://links.example.com/api', 'https://links.example.com/api#x', '/api'])
      expect(() => loadLinksConfig({ ...credentials, LINKS_API_RESOURCE: resource })).toThrow(
        /^LINKS_API_RESOURCE: an absolute https URI/,
      )
    expect(() => loadLinksConfig({ ...credentials, LINKS_VERIFICATION: 'none' })).toThrow(
      /^LINKS_VERIFICATION: /,
    )
  })

  it('serves /mcp only with its own registration: both credentials, its identifier, allowed origins', () => {
    expect(loadLinksConfig(credentials).mcp).toBeUndefined()
    const mcp = { LINKS_MCP_RESOURCE_SERVER_ID: 'rs_mcp', LINKS_MCP_RESOURCE_SERVER_SECRET: 'mcp-secret' }
    expect(loadLinksConfig({ ...credentials, ...mcp, LINKS_PUBLIC_URL: 'https://sho.rt' }).mcp).toEqual({
      resource: 'https://sho.rt/mcp',
      resourceServer: { id: 'rs_mcp', secret: 'mcp-secret' },
      allowedOrigins: [],
    })
    expect(
      loadLinksConfig({
        ...credentials,
        ...mcp,
        LINKS_MCP_RESOURCE: 'https://agents.sho.rt/mcp',
        LINKS_MCP_ALLOWED_ORIGINS: 'https://app.example, https://chat.example',
      }).mcp,
    ).toMatchObject({
      resource: 'https://agents.sho.rt/mcp',
      allowedOrigins: ['https://app.example', 'https://chat.example'],
    })
    expect(() => loadLinksConfig({ ...credentials, LINKS_MCP_RESOURCE_SERVER_ID: 'rs_mcp' })).toThrow(
      /^LINKS_MCP_RESOURCE_SERVER_SECRET is not set: set both to serve \/mcp/,
    )
    expect(() =>
      loadLinksConfig({ ...credentials, ...mcp, LINKS_MCP_ALLOWED_ORIGINS: 'not an origin' }),
    ).toThrow(/^LINKS_MCP_ALLOWED_ORIGINS: /)
  })

  it('examples/links-api/README.md documents exactly these variables', () => {
    const rows = tableAfter(readFileSync('examples/links-api/README.md', 'utf8'), '## Configuration')
    const names = rows.map((r) => /^`([A-Z_]+)`$/.exec(r[0]!)?.[1])
    expect(names.sort()).toEqual(Object.keys(linksConfigSchema.shape).sort())
  })
})
