import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import {
  authorizeUrl,
  Browser,
  hiddenField,
  locationParams,
  PASSWORD,
  seed,
  VERIFIER,
} from '../helpers/browser.js'
import { createParty, jwtClaims, mintCode, tokenRequest } from '../helpers/fixtures.js'
import { LINKS_API, registerApi } from '../helpers/resource-apis.js'

/**
 * REQUIRE_RESOURCE=true: every authorization must name the API(s) it is for (RFC 8707 §2,
 * `invalid_target`: "missing"), so that no token is issued for every API serving its scopes. The token
 * endpoint then takes the authorization's one API when the request names none, and refuses a code or
 * refresh token from before the setting, whose authorization named none.
 */

let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
beforeAll(async () => {
  t = await buildTestApp({ env: { ...GENEROUS_LIMITS, REQUIRE_RESOURCE: 'true' } })
  s = await seed(t)
  await registerApi(t, LINKS_API)
})
afterAll(async () => t.close())

const withResource = (resource?: string) => {
  const params: Record<string, string> = { ...s.params }
  return resource ? `${authorizeUrl(params)}&resource=${encodeURIComponent(resource)}` : authorizeUrl(params)
}

it('an authorization request naming no resource goes back to the client with invalid_target', async () => {
  const res = await new Browser(t.app).get(withResource())
  expect(res.statusCode).toBe(302)
  expect(res.headers.location).toMatch(/^https:\/\/app\.example\/callback\?/)
  expect(locationParams(res)).toMatchObject({
    error: 'invalid_target',
    error_description: expect.stringMatching(/^resource is required/),
    state: 'xyz-state',
    iss: t.config.issuer,
  })
})

it('naming it: a token for that API alone, also from an exchange and a refresh that name none', async () => {
  const browser = new Browser(t.app)
  const started = await browser.get(withResource(LINKS_API.resource))
  expect(started.statusCode).toBe(303)
  const requestId = new URL(String(started.headers.location), 'http://x').searchParams.get('request')!
  const signedIn = await browser.signIn(s.email, PASSWORD, requestId)
  const consent = await browser.get(String(signedIn.headers.location))
  const decided = await browser.post('/oauth/authorize', {
    request: hiddenField(consent.body, 'request'),
    csrf_token: hiddenField(consent.body, 'csrf_token'),
    decision: 'allow',
  })
  const code = new URL(String(decided.headers.location)).searchParams.get('code')!
  const exchanged = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    code_verifier: VERIFIER,
    client_id: s.client.id,
  })
  expect(exchanged.statusCode).toBe(200)
  expect(jwtClaims(exchanged.json().access_token).aud).toBe(LINKS_API.resource)
  const refreshed = await tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: exchanged.json().refresh_token,
    client_id: s.client.id,
  })
  expect(refreshed.statusCode).toBe(200)
  expect(jwtClaims(refreshed.json().access_token).aud).toBe(LINKS_API.resource)

  // A signed-in user with remembered consent takes the fast path; it refuses a silent request too.
  const again = await browser.get(withResource())
  expect(again.statusCode).toBe(302)
  expect(locationParams(again).error).toBe('invalid_target')
})

it('a code whose authorization named no API (issued before the setting): invalid_target, its family revoked', async () => {
  const party = await createParty(t)
  const { code, verifier } = await mintCode(t, party)
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: party.client.id,
  })
  expect(res.statusCode).toBe(400)
  expect(res.json()).toMatchObject({
    error: 'invalid_target',
    error_description: expect.stringMatching(/^resource is required/),
  })
  const families = await t.database.db
    .selectFrom('refresh_families')
    .select('revoked_at')
    .where('grant_id', '=', party.grant.id)
    .execute()
  expect(families).toHaveLength(1)
  expect(families[0]!.revoked_at).not.toBeNull()
})
