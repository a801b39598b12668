import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'

/**
 * Issue 40: which language a page speaks. The authorization request's ui_locales (kept with the
 * pending request through sign-in), then the person's choice in the menu (a cookie), then
 * Accept-Language, then DEFAULT_LOCALE (es here, so that each step is seen to win over the next).
 */

let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
beforeAll(async () => {
  t = await buildTestApp({ env: { ...GENEROUS_LIMITS, DEFAULT_LOCALE: 'es' } })
  s = await seed(t)
})
afterAll(async () => t.close())

const langOf = (body: string) => /<html lang="(\w+)"/.exec(body)?.[1]

/** A GET with the browser's cookies and an Accept-Language header. */
async function get(browser: Browser, url: string, acceptLanguage?: string) {
  const res = await t.app.inject({
    method: 'GET',
    url,
    headers: {
      cookie: browser.jar.header(),
      ...(acceptLanguage ? { 'accept-language': acceptLanguage } : {}),
    },
  })
  browser.jar.store(res)
  return res
}

describe('the language of a page', () => {
  it('is the operator default without anything else', async () => {
    const page = await get(new Browser(t.app), '/login')
    expect(langOf(page.body)).toBe('es')
    expect(page.body).toContain('<h1 id="title">Iniciar sesión en linkauth</h1>')
  })

  it('follows Accept-Language by q-value, a region tag matching its language', async () => {
    const browser = new Browser(t.app)
    expect(langOf((await get(browser, '/login', 'de-CH, en;q=0.5')).body)).toBe('de')
    expect(langOf((await get(browser, '/login', 'sv, ja;q=0.4, fr;q=0.9')).body)).toBe('fr')
    expect(langOf((await get(browser, '/login', 'sv')).body)).toBe('es')
    const english = await get(browser, '/login', 'en-GB')
    expect(english.body).toContain('<html lang="en">')
    expect(english.body).toContain('<h1 id="title">Sign in to linkauth</h1>')
  })

  it('is the menu choice over Accept-Language, remembered in a SameSite=Lax cookie', async () => {
    const browser = new Browser(t.app)
    const choice = await get(browser, '/language?lang=ja&back=%2Flogin%3Fnext%3Daccount-apps')
    expect(choice.statusCode).toBe(303)
    expect(choice.headers.location).toBe('/login?next=account-apps')
    const cookie = String(choice.headers['set-cookie'])
    expect(cookie).toMatch(/^linkauth_lang=ja;/)
    expect(cookie).toMatch(/SameSite=Lax/i)
    const page = await get(browser, '/login?next=account-apps', 'de')
    expect(langOf(page.body)).toBe('ja')
    // The menu brings the person back to this very page.
    expect(page.body).toContain('href="/language?lang=ar&amp;back=%2Flogin%3Fnext%3Daccount-apps"')
  })

  it('ignores an unknown language and a way back that leaves the site', async () => {
    const browser = new Browser(t.app)
    for (const back of ['//evil.example/', 'https://evil.example/', '/\\evil.example']) {
      const res = await get(browser, `/language?lang=xx&back=${encodeURIComponent(back)}`)
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe('/login')
      expect(res.headers['set-cookie']).toBeUndefined()
    }
  })

  it('is the request’s ui_locales over the cookie and Accept-Language, through sign-in to consent', async () => {
    const browser = new Browser(t.app)
    await get(browser, '/language?lang=ja&back=%2Flogin')
    const started = await get(browser, authorizeUrl({ ...s.params, ui_locales: 'sv-SE fr-CA de' }), 'de')
    expect(started.statusCode).toBe(303)
    const requestId = new URL(String(started.headers.location), 'http://x').searchParams.get('request')!
    const signIn = await get(browser, `/login?request=${requestId}`, 'de')
    expect(langOf(signIn.body)).toBe('fr')
    expect(signIn.body).toContain('Se connecter à linkauth')
    // A wrong password: the form comes back in the request's language too.
    const failed = await t.app.inject({
      method: 'POST',
      url: '/login',
      headers: { cookie: browser.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        email: s.email,
        password: 'wrong password here',
        csrf_token: hiddenField(signIn.body, 'csrf_token'),
        request: requestId,
      }).toString(),
    })
    expect(failed.statusCode).toBe(400)
    expect(failed.body).toContain('L’adresse e-mail ou le mot de passe est incorrect')
    // Its language menu goes back to the same sign-in, the request still pending.
    expect(failed.body).toContain(`back=${encodeURIComponent(`/login?request=${requestId}`)}"`)
    await browser.post('/login', {
      email: s.email,
      password: PASSWORD,
      csrf_token: hiddenField(signIn.body, 'csrf_token'),
      request: requestId,
    })
    const consent = await get(browser, `/oauth/authorize/continue?request=${requestId}`, 'de')
    expect(consent.statusCode).toBe(200)
    expect(langOf(consent.body)).toBe('fr')
    expect(consent.body).toContain('souhaite utiliser votre compte')
    expect(consent.body).toContain('Lire vos liens courts, vos étiquettes et vos statistiques')
    // Without ui_locales the cookie speaks again.
    expect(langOf((await get(browser, '/account/apps', 'de')).body)).toBe('ja')
  })

  it('of an error page follows the person too, with its advice and title translated', async () => {
    const res = await get(new Browser(t.app), '/no-such-page', 'ar')
    expect(res.statusCode).toBe(404)
    expect(res.body).toContain('<html lang="ar" dir="rtl">')
    expect(res.body).toContain('الصفحة غير موجودة')
  })
})

describe('DEFAULT_LOCALE', () => {
  it('is checked at start', () => {
    expect(() => loadConfig({ DEFAULT_LOCALE: 'xx' })).toThrow(ConfigError)
    expect(() => loadConfig({ DEFAULT_LOCALE: 'xx' })).toThrow(/DEFAULT_LOCALE/)
    expect(loadConfig({ DEFAULT_LOCALE: 'ar' }).defaultLocale).toBe('ar')
  })
})
