import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { createParty, exchangeCode, mintCode, type Party } from '../helpers/fixtures.js'
import { basicAuth } from '../helpers/tokens.js'

/**
 * RFC 6749 §2.3.1: a public client may name itself as the user-id of HTTP Basic with an empty
 * password (simple-oauth2's and many classic libraries' default), at the token endpoint and at the
 * revocation endpoint alike. The headers here are written out by hand.
 */

let t: TestApp
let party: Party
beforeAll(async () => {
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  party = await createParty(t)
})
afterAll(async () => t.close())

const rawBasic = (userPass: string) => `Basic ${Buffer.from(userPass).toString('base64')}`

function post(url: string, form: Record<string, string>, authorization?: string, app = t.app) {
  return app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authorization === undefined ? {} : { authorization }),
    },
    payload: new URLSearchParams(form).toString(),
  })
}
const token = (form: Record<string, string>, authorization?: string) =>
  post('/api/oauth/token', form, authorization)
const revoke = (form: Record<string, string>, authorization?: string) =>
  post('/api/oauth/revoke', form, authorization)

async function codeExchange(authorization: string, extra: Record<string, string> = {}) {
  const { code, verifier } = await mintCode(t, party)
  const res = await token(
    { grant_type: 'authorization_code', code, code_verifier: verifier, ...extra },
    authorization,
  )
  return { res, code, verifier }
}

describe('the token endpoint', () => {
  it('takes client_id from Basic with an empty password: code exchange and refresh', async () => {
    const { res } = await codeExchange(rawBasic(`${party.client.id}:`))
    expect(res.statusCode, res.body).toBe(200)
    const refreshed = await token(
      { grant_type: 'refresh_token', refresh_token: res.json().refresh_token },
      rawBasic(`${party.client.id}:`),
    )
    expect(refreshed.statusCode, refreshed.body).toBe(200)
    expect(refreshed.json().refresh_token).not.toBe(res.json().refresh_token)
  })

  it('form-decodes the Basic user-id (RFC 6749 §2.3.1)', async () => {
    const id = party.client.id
    const encoded = `%${id.charCodeAt(0).toString(16).toUpperCase()}${id.slice(1)}`
    const { res } = await codeExchange(rawBasic(`${encoded}:`))
    expect(res.statusCode, res.body).toBe(200)
  })

  it('accepts the same client_id in Basic and in the body', async () => {
    const { res } = await codeExchange(rawBasic(`${party.client.id}:`), { client_id: party.client.id })
    expect(res.statusCode, res.body).toBe(200)
  })

  it('refuses a Basic id and a body client_id that differ (invalid_request), before the code is spent', async () => {
    const other = await createParty(t)
    const { res, code, verifier } = await codeExchange(rawBasic(`${other.client.id}:`), {
      client_id: party.client.id,
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
    const retry = await token(
      { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: party.client.id },
      undefined,
    )
    expect(retry.statusCode, retry.body).toBe(200)
  })

  it.each([
    ['a non-empty Basic password', (id: string) => ({ authorization: basicAuth(id, 's3cret') })],
    ['a client_secret in the body', (id: string) => ({ form: { client_id: id, client_secret: 's3cret' } })],
    ['malformed Basic credentials', () => ({ authorization: 'Basic %%%' })],
    ['Basic without a user-id', () => ({ authorization: rawBasic(':') })],
  ])('refuses %s: 401 invalid_client with WWW-Authenticate, code not spent', async (_name, make) => {
    const { code, verifier } = await mintCode(t, party)
    const how = make(party.client.id) as { authorization?: string; form?: Record<string, string> }
    const res = await token(
      { grant_type: 'authorization_code', code, code_verifier: verifier, ...how.form },
      how.authorization,
    )
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
    expect(res.headers['www-authenticate']).toBe('Basic realm="linkauth"')
    expect(res.body).not.toContain('s3cret')
    const retry = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: party.client.id,
    })
    expect(retry.statusCode, retry.body).toBe(200)
  })

  it('takes an empty client_secret in the body (passport-oauth2 sends one) as no secret', async () => {
    const { code, verifier } = await mintCode(t, party)
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=authorization_code&code=${code}&code_verifier=${verifier}&client_id=${party.client.id}&client_secret=`,
    })
    expect(res.statusCode, res.body).toBe(200)
  })

  it('ignores an Authorization header of another scheme, as before', async () => {
    const { code, verifier } = await mintCode(t, party)
    const res = await token(
      { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: party.client.id },
      'Bearer abc',
    )
    expect(res.statusCode, res.body).toBe(200)
  })

  it('counts a Basic-only request against its client, not against the address', async () => {
    // Two requests naming no client use up this address's quota; Basic-only ones must not count there.
    const strict = await buildTestApp({ database: t.database, env: { UNIDENTIFIED_RATE_LIMIT: '2' } })
    try {
      for (let i = 0; i < 4; i++) {
        const res = await post(
          '/api/oauth/token',
          { grant_type: 'refresh_token', refresh_token: 'not-a-live-token' },
          rawBasic(`${party.client.id}:`),
          strict.app,
        )
        expect(res.statusCode, res.body).toBe(400)
        expect(res.json().error).toBe('invalid_grant')
      }
    } finally {
      await strict.close()
    }
  })
})

describe('the revocation endpoint', () => {
  it('takes client_id from Basic with an empty password', async () => {
    const tokens = await exchangeCode(t, party)
    const res = await revoke(
      { token: tokens.refresh_token, token_type_hint: 'refresh_token' },
      rawBasic(`${party.client.id}:`),
    )
    expect(res.statusCode, res.body).toBe(200)
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.client.id,
    })
    expect(refresh.json().error).toBe('invalid_grant')
  })

  it('refuses a Basic id and a body client_id that differ, and a Basic password', async () => {
    const other = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const differ = await revoke(
      { token: tokens.refresh_token, client_id: party.client.id },
      rawBasic(`${other.client.id}:`),
    )
    expect(differ.statusCode).toBe(400)
    expect(differ.json().error).toBe('invalid_request')
    const password = await revoke({ token: tokens.refresh_token }, basicAuth(party.client.id, 'x'))
    expect(password.statusCode).toBe(401)
    expect(password.json().error).toBe('invalid_client')
    expect(password.headers['www-authenticate']).toBe('Basic realm="linkauth"')
  })

  it('without any client_id: 400 invalid_request, like the token endpoint', async () => {
    const tokens = await exchangeCode(t, party)
    const res = await revoke({ token: tokens.refresh_token })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'client_id is required.' })
    const atToken = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    expect(atToken.statusCode).toBe(400)
    expect(atToken.json()).toEqual(res.json())
  })
})
