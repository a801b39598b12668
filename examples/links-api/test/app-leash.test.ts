import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { describe, expect, it } from 'vitest'
import { apiCall } from '../../../test/helpers/api-call.js'
import { createParty, type Party } from '../../../test/helpers/fixtures.js'
import { upsertGrant } from '../../../src/grants/grant.repository.js'
import type { AppLimits } from '../../shared/app-leash.js'
import { partyOfKind, tokenOf } from './leash-parties.js'
import { linksBase, mcpUrl, t, useMcpServices } from './mcp-services.js'

/**
 * Issue 37 part 4, the leash: the links API limits the new links an application makes for each
 * person in an hour by the standing its token carries (client_standing), over REST (429,
 * Retry-After, a JSON error) and MCP (a tool error the agent can show), counted in the API's own
 * database by (person, application), exactly at the limit under concurrency.
 */

const LIMITS: AppLimits = { unverified: 2, vouched: 3, verified: null }

/** The links API's clock (tokens keep real time): a test moves it to the next hour. */
let now = new Date('2026-03-01T12:10:00Z')
useMcpServices({ appLimits: LIMITS, clock: { now: () => now } })
const base = () => linksBase

/** The same application as `party`, for another person (`userId`), with a grant. */
async function sameAppFor(userId: string, party: Party): Promise<Party> {
  const scopes = ['links:read', 'links:write']
  const grant = await upsertGrant(t.database.db, { userId, clientId: party.client.id, scopes }, t.clock.now())
  return { userId, client: party.client, grant }
}

const create = (token: string, body: Record<string, unknown> = { target_url: 'https://example.com/' }) =>
  apiCall(base(), 'POST', '/api/links', token, { json: body })

describe('REST: POST /api/links', () => {
  it('an unverified app makes its limit of links for a person, then gets 429 with Retry-After and a JSON error', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    expect((await create(token)).status).toBe(201)
    expect((await create(token)).status).toBe(201)
    const refused = await create(token)
    expect(refused.status).toBe(429)
    const retryAfter = Number(refused.headers.get('retry-after'))
    // 12:10 in a fixed hour window: the count starts again at 13:00.
    expect(retryAfter).toBe(50 * 60)
    expect(refused.body).toMatchObject({
      error: 'app_limit_reached',
      retry_after: retryAfter,
      retry_at: '2026-03-01T13:00:00.000Z',
      limit: 2,
      window_seconds: 3600,
      client_standing: 'unverified',
    })
    expect(String(refused.body.error_description)).toMatch(
      /unverified.*at most 2 new links an hour.*3000 seconds/,
    )
    expect(refused.headers.get('cache-control')).toBe('no-store')
  })

  it('counts by person and application: another app for the same person, or the same app for another person, is not held', async () => {
    const first = await partyOfKind('dynamic')
    const token = await tokenOf(first)
    for (let i = 0; i < 2; i++) expect((await create(token)).status).toBe(201)
    expect((await create(token)).status).toBe(429)
    // The same application for another person.
    const other = await createParty(t)
    expect((await create(await tokenOf(await sameAppFor(other.userId, first)))).status).toBe(201)
    // Another unverified application for the first person.
    const secondApp = await sameAppFor(first.userId, await partyOfKind('dynamic'))
    expect((await create(await tokenOf(secondApp))).status).toBe(201)
  })

  it('a vouched app has its own limit; a verified app (registered, or verified by the operator) none', async () => {
    const vouched = await tokenOf(await partyOfKind('metadata_document'))
    for (let i = 0; i < 3; i++) expect((await create(vouched)).status).toBe(201)
    const refused = await create(vouched)
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ limit: 3, client_standing: 'vouched' })
    for (const party of [await partyOfKind('registered'), await partyOfKind('dynamic', 'verified')]) {
      const token = await tokenOf(party)
      for (let i = 0; i < 5; i++) expect((await create(token)).status).toBe(201)
    }
  })

  it('a registered app whose standing the operator took away is held like any unverified one', async () => {
    const token = await tokenOf(await partyOfKind('registered', 'unverified'))
    for (let i = 0; i < 2; i++) expect((await create(token)).status).toBe(201)
    expect((await create(token)).status).toBe(429)
  })

  it('a create that fails (slug taken, bad input) is not counted', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    const slug = `leash-${Math.random().toString(36).slice(2, 10)}`
    expect((await create(token, { target_url: 'https://example.com/', slug })).status).toBe(201)
    expect((await create(token, { target_url: 'https://example.com/', slug })).status).toBe(409)
    expect((await create(token, { target_url: 'not a url' })).status).toBe(400)
    expect((await create(token)).status).toBe(201)
    expect((await create(token)).status).toBe(429)
  })

  it('two concurrent creates at the limit: exactly one passes', async () => {
    for (let round = 0; round < 3; round++) {
      const token = await tokenOf(await partyOfKind('dynamic'))
      expect((await create(token)).status).toBe(201)
      const answers = await Promise.all([create(token), create(token)])
      expect(answers.map((a) => a.status).sort()).toEqual([201, 429])
    }
  })

  it('many concurrent creates: exactly the limit pass', async () => {
    const token = await tokenOf(await partyOfKind('metadata_document'))
    const answers = await Promise.all(Array.from({ length: 8 }, () => create(token)))
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3)
    expect(answers.filter((a) => a.status === 429)).toHaveLength(5)
  })

  it('a new hour starts the count again', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    for (let i = 0; i < 2; i++) expect((await create(token)).status).toBe(201)
    expect((await create(token)).status).toBe(429)
    const before = now
    now = new Date('2026-03-01T13:00:01Z')
    try {
      expect((await create(token)).status).toBe(201)
      expect((await create(token)).status).toBe(201)
      const refused = await create(token)
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe(String(3600 - 1))
    } finally {
      now = before
    }
  })
})

describe('MCP: the create_link tool', () => {
  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'leash-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    return client
  }

  it('answers past the limit with a tool error the agent can show, naming when to try again', async () => {
    const party = await partyOfKind('dynamic')
    const client = await connect(await tokenOf(party, mcpUrl.href))
    try {
      const call = () =>
        client.callTool({ name: 'create_link', arguments: { target_url: 'https://example.com/mcp' } })
      for (let i = 0; i < 2; i++) expect((await call()).isError).toBeFalsy()
      const refused = await call()
      expect(refused.isError).toBe(true)
      const text = (refused.content as { type: string; text: string }[])[0]!.text
      expect(text).toMatch(/^app_limit_reached: This application is unverified/)
      expect(text).toContain('Try again in 3000 seconds (at 2026-03-01T13:00:00.000Z)')
      // The REST API counts the same links: the app is held there too.
      expect((await create(await tokenOf(party))).status).toBe(429)
    } finally {
      await client.close()
    }
  })
})
