import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { isNativeRedirectUri, originKey, redirectUriMatches } from '../../src/clients/redirect-uri.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import {
  authorizeUrl,
  Browser,
  countRows,
  hiddenField,
  locationParams,
  PASSWORD,
  seed,
  VERIFIER,
} from '../helpers/browser.js'

/**
 * Issue 31 item 8: native apps (RFC 8252). A loopback redirect URI matches on any port (§7.3), its
 * scheme, host, path and query still exact; and a remembered consent is never used silently for a
 * loopback or private-use redirect URI (§8.6): the user confirms with one click.
 */

describe('redirectUriMatches (RFC 8252 §7.3)', () => {
  const registered = ['http://127.0.0.1/callback', 'http://[::1]:9514/cb?x=1', 'com.example.app:/cb']
  it.each([
    'http://127.0.0.1/callback',
    'http://127.0.0.1:9999/callback',
    'http://127.0.0.1:1/callback',
    'http://[::1]:9514/cb?x=1',
    'http://[::1]:65535/cb?x=1',
    'http://[::1]/cb?x=1',
    'com.example.app:/cb',
  ])('accepts %s', (uri) => {
    expect(redirectUriMatches(registered, uri)).toBe(true)
  })
  it.each([
    'http://localhost:9999/callback', // another host
    'https://127.0.0.1:9999/callback', // another scheme
    'http://127.0.0.1:9999/callback/', // another path
    'http://127.0.0.1:9999/callbackx',
    'http://127.0.0.1:9999/callback?x=1', // another query
    'http://127.0.0.1:0/callback', // no such port
    'http://127.0.0.1:65536/callback',
    'http://127.0.0.1:9999@evil.example/callback',
    'http://127.0.0.1.evil.example/callback',
    'http://[::1]:9999/cb?x=2',
    'com.example.app:/cb2',
  ])('refuses %s', (uri) => {
    expect(redirectUriMatches(registered, uri)).toBe(false)
  })
  it('keeps exact matching for https', () => {
    expect(redirectUriMatches(['https://app.example/cb'], 'https://app.example:8443/cb')).toBe(false)
  })
  it('tells native redirect URIs apart', () => {
    expect(isNativeRedirectUri('http://127.0.0.1:4000/cb')).toBe(true)
    expect(isNativeRedirectUri('http://localhost/cb')).toBe(true)
    expect(isNativeRedirectUri('com.example.app:/cb')).toBe(true)
    expect(isNativeRedirectUri('https://app.example/cb')).toBe(false)
  })
  it('keys loopback origins without their port (CORS)', () => {
    expect(originKey('http://127.0.0.1:5173')).toBe(originKey('http://127.0.0.1'))
    expect(originKey('https://app.example:8443')).toBe('https://app.example:8443')
  })
})

let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
const LOOPBACK = 'http://127.0.0.1/callback'
beforeAll(async () => {
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  s = await seed(t, { redirectUris: [LOOPBACK, 'com.example.app:/cb', 'https://app.example/callback'] })
})
afterAll(async () => t.close())
beforeEach(async () => {
  await t.database.db.deleteFrom('authorization_codes').execute()
  await t.database.db.deleteFrom('grants').execute()
})

const requestIdOf = (location: unknown) => new URL(String(location), 'http://x').searchParams.get('request')!

async function signedIn(redirectUri: string) {
  const browser = new Browser(t.app)
  const started = await browser.get(authorizeUrl({ ...s.params, redirect_uri: redirectUri }))
  expect(started.statusCode).toBe(303)
  const requestId = requestIdOf(started.headers.location)
  await browser.signIn(s.email, PASSWORD, requestId)
  const page = await browser.get(`/oauth/authorize/continue?request=${requestId}`)
  return { browser, page }
}

async function click(browser: Browser, page: { body: string }, decision: 'allow' | 'deny' = 'allow') {
  return browser.post('/oauth/authorize', {
    request: hiddenField(page.body, 'request'),
    csrf_token: hiddenField(page.body, 'csrf_token'),
    decision,
  })
}

describe('a loopback redirect URI on another port', () => {
  it('is accepted, the code goes to that port and exchanges with the same redirect_uri', async () => {
    const redirectUri = 'http://127.0.0.1:53682/callback'
    const { browser, page } = await signedIn(redirectUri)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('wants to use your account')
    const answer = await click(browser, page)
    expect(answer.statusCode).toBe(303)
    expect(String(answer.headers.location)).toMatch(/^http:\/\/127\.0\.0\.1:53682\/callback\?code=/)
    const token = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      payload: {
        grant_type: 'authorization_code',
        code: locationParams(answer).code,
        code_verifier: VERIFIER,
        client_id: s.client.id,
        redirect_uri: redirectUri,
      },
    })
    expect(token.statusCode).toBe(200)
  })

  it('on another host, scheme or path is an error page, never a redirect', async () => {
    for (const uri of [
      'http://localhost:53682/callback',
      'https://127.0.0.1:53682/callback',
      'http://127.0.0.1:53682/other',
    ]) {
      const res = await new Browser(t.app).get(authorizeUrl({ ...s.params, redirect_uri: uri }))
      expect(res.statusCode, uri).toBe(400)
      expect(res.headers.location).toBeUndefined()
    }
  })

  it('lets a browser page on that loopback port read the token answer (CORS)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { origin: 'http://127.0.0.1:5173' },
      payload: {
        grant_type: 'authorization_code',
        code: 'x'.repeat(43),
        code_verifier: VERIFIER,
        client_id: s.client.id,
      },
    })
    expect(res.headers['access-control-allow-origin']).toBe('http://127.0.0.1:5173')
  })
})

describe('a remembered consent for a native redirect URI (RFC 8252 §8.6)', () => {
  for (const redirectUri of ['http://127.0.0.1:40001/callback', 'com.example.app:/cb']) {
    it(`asks for one click, then sends the code (${redirectUri})`, async () => {
      const first = await signedIn(redirectUri)
      expect((await click(first.browser, first.page)).statusCode).toBe(303)
      expect(await countRows(t)).toEqual({ grants: 1, codes: 1 })

      // The same browser again: a signed-in user whose grant covers the request.
      const again = await first.browser.get(authorizeUrl({ ...s.params, redirect_uri: redirectUri }))
      expect(again.statusCode).toBe(200)
      expect(again.body).toContain(
        'Continue to <span class="app-title"><span class="app-name">Link App</span>?</span>',
      )
      // Its words are those of its buttons (Continue / Cancel), not of the consent page's Allow.
      expect(again.body).toContain('If you continue, it will be able to:')
      expect(again.body).toContain('Continuing sends you back to')
      expect(again.body).not.toContain('Allowing')
      expect(again.body).toContain('>Continue</button>')
      expect(again.body).toContain('>Cancel</button>')
      expect(again.body).not.toContain('wants to use your account')
      expect(await countRows(t)).toEqual({ grants: 1, codes: 1 })

      const confirmed = await click(first.browser, again)
      expect(confirmed.statusCode).toBe(303)
      expect(String(confirmed.headers.location).startsWith(`${redirectUri}?code=`)).toBe(true)
      expect(await countRows(t)).toEqual({ grants: 1, codes: 2 })

      const none = await first.browser.get(
        authorizeUrl({ ...s.params, redirect_uri: redirectUri, prompt: 'none' }),
      )
      expect(none.statusCode).toBe(302)
      expect(locationParams(none).error).toBe('consent_required')
    })
  }

  it('keeps an https redirect URI silent', async () => {
    const redirectUri = 'https://app.example/callback'
    const first = await signedIn(redirectUri)
    expect((await click(first.browser, first.page)).statusCode).toBe(303)
    const again = await first.browser.get(authorizeUrl({ ...s.params, redirect_uri: redirectUri }))
    expect(again.statusCode).toBe(302)
    expect(locationParams(again).code).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('Cancel on the confirmation sends access_denied and leaves the grant', async () => {
    const redirectUri = 'http://127.0.0.1:40002/callback'
    const first = await signedIn(redirectUri)
    await click(first.browser, first.page)
    const again = await first.browser.get(authorizeUrl({ ...s.params, redirect_uri: redirectUri }))
    const cancelled = await click(first.browser, again, 'deny')
    expect(locationParams(cancelled).error).toBe('access_denied')
    expect((await countRows(t)).grants).toBe(1)
  })
})
