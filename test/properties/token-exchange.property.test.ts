import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REFRESH_RETRY_ANSWERS } from '../../src/grants/refresh-token.repository.js'
import { s256Challenge } from '../../src/lib/pkce.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { createTestClock } from '../helpers/clock.js'
import {
  createParty,
  exchangeCode,
  jwtClaims,
  mintCode,
  type Party,
  type TokenBody,
} from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'
import { LINKS_API, registerApi, SHOP_API } from '../helpers/resource-apis.js'
import {
  createResourceServer,
  introspect,
  refreshTokenIsLive,
  type ResourceServerCredentials,
} from '../helpers/tokens.js'

/**
 * A model of the token endpoint: take a valid request, mutate it every way a client, a bug or an
 * attacker might (another code, verifier, client or redirect_uri; the challenge sent as the verifier,
 * i.e. a PKCE downgrade to plain; repeated or non-string parameters; other encodings), send the
 * variants in any order, and compare each answer with the model: a token is issued only for a
 * request equivalent to the valid one, only while the code (or refresh token) is unspent, and so at
 * most once. A spent refresh token gets its retry window (REFRESH_REUSE_WINDOW) modelled too.
 */

const OTHER_URI = 'https://app.example/other'
let t: TestApp
let party: Party
let other: Party
let rs: ResourceServerCredentials
/** Instances over the same database: without the refresh retry window, and with it on a test clock. */
let noWindow: TestApp
let windowed: TestApp
const clock = createTestClock()
beforeAll(async () => {
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  noWindow = await buildTestApp({
    database: t.database,
    env: { ...GENEROUS_LIMITS, REFRESH_REUSE_WINDOW: '0' },
  })
  windowed = await buildTestApp({ database: t.database, clock, env: GENEROUS_LIMITS })
  party = await createParty(t)
  await t.database.db
    .updateTable('clients')
    .set({ redirect_uris: [party.client.redirectUris[0]!, OTHER_URI] })
    .where('id', '=', party.client.id)
    .execute()
  other = await createParty(t)
  rs = await createResourceServer(t)
  for (const api of [LINKS_API, SHOP_API]) await registerApi(t, api)
})
afterAll(async () => {
  await Promise.all([noWindow.close(), windowed.close()])
  await t.close()
})

type Params = Record<string, unknown>

/** One way to change a request, and whether the result still means the same as the valid one. */
interface Variant {
  name: string
  equivalent: boolean
  /**
   * Whether it still presents the code (or refresh token) to be spent: once the code has issued
   * tokens, presenting it again by any such request is a replay, and the tokens die.
   */
  presents?: boolean
  /** A refresh token in another client's hands has leaked: its family dies, spent or not (issue 31). */
  leaks?: boolean
  change(params: Params): Params
  encoding?: 'form' | 'json' | 'form-charset'
}

const set = (name: string, value: unknown) => (p: Params) => ({ ...p, [name]: value })
const drop = (name: string) => (p: Params) =>
  Object.fromEntries(Object.entries(p).filter(([k]) => k !== name))
const flip = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A')

function codeVariants(code: string, verifier: string): Variant[] {
  return [
    { name: 'valid', equivalent: true, change: (p) => p },
    { name: 'valid as JSON', equivalent: true, change: (p) => p, encoding: 'json' },
    { name: 'valid with charset', equivalent: true, change: (p) => p, encoding: 'form-charset' },
    { name: 'no grant_type (a code is enough)', equivalent: true, change: drop('grant_type') },
    { name: 'no redirect_uri', equivalent: true, change: drop('redirect_uri') },
    { name: 'empty redirect_uri', equivalent: true, change: set('redirect_uri', '') },
    { name: 'a stray parameter', equivalent: true, change: set('ui_locales', 'de') },
    // RFC 8707: an unknown API is refused before the code is looked at; a registered one the code was
    // not issued for is a refused redemption, which spends the code.
    { name: 'an unregistered resource', equivalent: false, change: set('resource', 'https://x.example') },
    {
      name: 'a resource the code was not for',
      equivalent: false,
      presents: true,
      change: set('resource', LINKS_API.resource),
    },
    {
      name: 'two resources',
      equivalent: false,
      change: set('resource', [LINKS_API.resource, SHOP_API.resource]),
    },
    { name: 'another code', equivalent: false, change: set('code', randomToken()) },
    { name: 'the code altered', equivalent: false, change: set('code', flip(code)) },
    { name: 'the code truncated', equivalent: false, change: set('code', code.slice(0, -1)) },
    {
      name: 'another verifier',
      equivalent: false,
      presents: true,
      change: set('code_verifier', randomToken(48)),
    },
    {
      name: 'the verifier altered',
      equivalent: false,
      presents: true,
      change: set('code_verifier', flip(verifier)),
    },
    // PKCE downgrade: the challenge itself, as if the method were plain.
    {
      name: 'the challenge as verifier',
      equivalent: false,
      presents: true,
      change: set('code_verifier', s256Challenge(verifier)),
    },
    { name: 'a short verifier', equivalent: false, change: set('code_verifier', verifier.slice(0, 42)) },
    { name: 'no verifier', equivalent: false, change: drop('code_verifier') },
    { name: 'another client', equivalent: false, presents: true, change: set('client_id', other.client.id) },
    { name: 'an unknown client', equivalent: false, change: set('client_id', 'unknown-client-id') },
    { name: 'no client', equivalent: false, change: drop('client_id') },
    {
      name: 'its other redirect_uri',
      equivalent: false,
      presents: true,
      change: set('redirect_uri', OTHER_URI),
    },
    {
      name: "another client's redirect_uri",
      equivalent: false,
      presents: true,
      change: set('redirect_uri', 'https://evil.example/cb'),
    },
    { name: 'grant_type refresh_token', equivalent: false, change: set('grant_type', 'refresh_token') },
    { name: 'grant_type in capitals', equivalent: false, change: set('grant_type', 'AUTHORIZATION_CODE') },
    { name: 'the code repeated', equivalent: false, change: set('code', [code, code]) },
    { name: 'the code in an object', equivalent: false, change: set('code', { code }), encoding: 'json' },
    {
      name: 'the verifier as a number',
      equivalent: false,
      change: set('code_verifier', 1e21),
      encoding: 'json',
    },
  ]
}

function refreshVariants(token: string): Variant[] {
  return [
    { name: 'valid', equivalent: true, change: (p) => p },
    { name: 'valid as JSON', equivalent: true, change: (p) => p, encoding: 'json' },
    { name: 'a narrower scope', equivalent: true, change: set('scope', 'links:read') },
    { name: 'the same scope', equivalent: true, change: set('scope', 'links:write links:read') },
    {
      name: 'a wider scope',
      equivalent: false,
      presents: true,
      change: set('scope', 'links:read products:sync'),
    },
    { name: 'an unknown scope', equivalent: false, change: set('scope', 'admin') },
    { name: 'the token altered', equivalent: false, change: set('refresh_token', flip(token)) },
    { name: 'another token', equivalent: false, change: set('refresh_token', randomToken()) },
    { name: 'another client', equivalent: false, leaks: true, change: set('client_id', other.client.id) },
    {
      name: 'an unknown client',
      equivalent: false,
      leaks: true,
      change: set('client_id', 'unknown-client-id'),
    },
    { name: 'no grant_type', equivalent: false, change: drop('grant_type') },
    {
      name: 'grant_type authorization_code',
      equivalent: false,
      change: set('grant_type', 'authorization_code'),
    },
    { name: 'the token repeated', equivalent: false, change: set('refresh_token', [token, token]) },
    {
      name: 'the token in an array',
      equivalent: false,
      change: set('refresh_token', [token]),
      encoding: 'json',
    },
  ]
}

function send(
  params: Params,
  encoding: Variant['encoding'] = 'form',
  app = t,
): Promise<LightMyRequestResponse> {
  if (encoding === 'json')
    return app.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(params),
    })
  const form = new URLSearchParams()
  for (const [name, value] of Object.entries(params))
    for (const v of Array.isArray(value) ? value : [value]) form.append(name, String(v))
  return app.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    headers: {
      'content-type':
        encoding === 'form-charset'
          ? 'application/x-www-form-urlencoded; charset=utf-8'
          : 'application/x-www-form-urlencoded',
    },
    payload: form.toString(),
  })
}

/** Indexes into a variant list, with the valid request at least once in most runs. */
const sequence = (count: number) =>
  fc
    .tuple(fc.array(fc.nat(count - 1), { minLength: 1, maxLength: 6 }), fc.boolean(), fc.nat(6))
    .map(([picks, withValid, at]) => (withValid ? [...picks.slice(0, at), 0, ...picks.slice(at)] : picks))

function expectError(res: LightMyRequestResponse, label: string): void {
  expect(res.statusCode, `${label}: ${res.body}`).toBeGreaterThanOrEqual(400)
  expect(res.statusCode, `${label}: ${res.body}`).toBeLessThan(500)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
}

describe('the token endpoint as a model', () => {
  it('issues tokens for a code only to the exact valid request, only once', async () => {
    const variantCount = codeVariants('x', 'y').length
    await fc.assert(
      fc.asyncProperty(sequence(variantCount), async (picks) => {
        const minted = await mintCode(t, party)
        const variants = codeVariants(minted.code, minted.verifier)
        const valid: Params = {
          grant_type: 'authorization_code',
          code: minted.code,
          code_verifier: minted.verifier,
          client_id: party.client.id,
          redirect_uri: party.client.redirectUris[0]!,
        }
        const spent = async () =>
          await t.database.db
            .selectFrom('authorization_codes')
            .select(['consumed_at', 'family_id'])
            .where('code_hash', '=', sha256(minted.code))
            .executeTakeFirstOrThrow()
        const issued: TokenBody[] = []
        let replayed = false
        for (const pick of picks) {
          const variant = variants[pick]!
          const before = await spent()
          const res = await send(variant.change(valid), variant.encoding)
          if (variant.equivalent && before.consumed_at === null) {
            expect(res.statusCode, `${variant.name}: ${res.body}`).toBe(200)
            issued.push(res.json())
          } else {
            expectError(res, variant.name)
            if ((variant.equivalent || variant.presents) && issued.length > 0) replayed = true
          }
        }
        expect(issued.length).toBeLessThanOrEqual(1)
        const after = await spent()
        if (issued.length === 0)
          expect(after.family_id).toBeNull() // nothing issued for this code
        else expect(after.family_id).toBe(jwtClaims(issued[0]!.access_token).family_id)
        // Presenting the code again after it issued tokens is a replay: those tokens die.
        if (issued.length === 1)
          expect((await introspect(t, rs, issued[0]!.access_token)).active).toBe(!replayed)
      }),
      { numRuns: 150 },
    )
    await expectInvariants(t.database.db)
  }, 120_000)

  it('REFRESH_REUSE_WINDOW=0: rotates a refresh token only for the exact valid request, only once; reuse kills the family', async () => {
    const variantCount = refreshVariants('x').length
    await fc.assert(
      fc.asyncProperty(sequence(variantCount), async (picks) => {
        const start = await exchangeCode(noWindow, party)
        const variants = refreshVariants(start.refresh_token)
        const valid: Params = {
          grant_type: 'refresh_token',
          refresh_token: start.refresh_token,
          client_id: party.client.id,
        }
        const live = async () => {
          const row = await t.database.db
            .selectFrom('refresh_tokens as r')
            .innerJoin('refresh_families as f', 'f.id', 'r.family_id')
            .select(['r.rotated_at', 'f.revoked_at'])
            .where('r.token_hash', '=', sha256(start.refresh_token))
            .executeTakeFirstOrThrow()
          return row.rotated_at === null && row.revoked_at === null
        }
        const issued: TokenBody[] = []
        let reused = false
        for (const pick of picks) {
          const variant = variants[pick]!
          const wasLive = await live()
          const res = await send(variant.change(valid), variant.encoding, noWindow)
          if (variant.equivalent && wasLive) {
            expect(res.statusCode, `${variant.name}: ${res.body}`).toBe(200)
            issued.push(res.json())
          } else {
            expectError(res, variant.name)
            if ((variant.equivalent || variant.presents) && issued.length > 0) reused = true
            if (variant.leaks) reused = true
          }
        }
        expect(issued.length).toBeLessThanOrEqual(1)
        if (issued.length === 1) {
          expect(await refreshTokenIsLive(t, issued[0]!.refresh_token)).toBe(!reused)
        }
      }),
      { numRuns: 120 },
    )
    await expectInvariants(t.database.db)
  }, 120_000)

  it('with the retry window: a spent token answers the valid request inside it, at most the bound; after it reuse kills the family', async () => {
    const WINDOW = windowed.config.refreshReuseWindow
    const variants = refreshVariants('x')
    const equivalents = variants.flatMap((v, i) => (v.equivalent ? [i] : []))
    // Requests with waits between them that straddle the window's end; mostly valid ones, to reach the bound.
    const steps = fc.array(
      fc.record({
        pick: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...equivalents) },
          { weight: 2, arbitrary: fc.nat(variants.length - 1) },
        ),
        wait: fc.oneof(
          { weight: 6, arbitrary: fc.constant(0) },
          { weight: 1, arbitrary: fc.constantFrom(1, WINDOW - 1, WINDOW) },
        ),
      }),
      { minLength: 1, maxLength: 14 },
    )
    await fc.assert(
      fc.asyncProperty(steps, async (steps) => {
        const start = await exchangeCode(windowed, party)
        const variants = refreshVariants(start.refresh_token)
        const valid: Params = {
          grant_type: 'refresh_token',
          refresh_token: start.refresh_token,
          client_id: party.client.id,
        }
        // The model: when the token rotated, how many retries it answered since, whether it was reused.
        let rotatedAt: number | undefined
        let answers = 0
        let revoked = false
        const issued: TokenBody[] = []
        for (const { pick, wait } of steps) {
          clock.advance(wait)
          const variant = variants[pick]!
          const res = await send(variant.change(valid), variant.encoding, windowed)
          const now = clock.now().getTime()
          const inWindow = rotatedAt !== undefined && now - rotatedAt < WINDOW * 1000
          const answered =
            variant.equivalent &&
            !revoked &&
            (rotatedAt === undefined || (inWindow && answers < REFRESH_RETRY_ANSWERS))
          if (answered) {
            expect(res.statusCode, `${variant.name}: ${res.body}`).toBe(200)
            issued.push(res.json())
            if (rotatedAt === undefined) rotatedAt = now
            else answers++
          } else {
            expectError(res, variant.name)
            if (rotatedAt !== undefined && !inWindow && (variant.equivalent || variant.presents))
              revoked = true
            if (variant.leaks) revoked = true
          }
        }
        expect(issued.length).toBeLessThanOrEqual(1 + REFRESH_RETRY_ANSWERS)
        // Every answer's refresh token is live until a reuse after the window revokes them all.
        for (const answer of issued)
          expect(await refreshTokenIsLive(windowed, answer.refresh_token)).toBe(!revoked)
      }),
      { numRuns: 100 },
    )
    await expectInvariants(t.database.db)
  }, 120_000)
})
