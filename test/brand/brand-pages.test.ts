import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { ACME_SVG, writeLogos } from '../helpers/brand-logos.js'
import { authorizeUrl, Browser, PASSWORD, seed } from '../helpers/browser.js'

/**
 * Issue 40 §2: the operator's brand on every page, from configuration alone: name, logo, colours,
 * support and legal links; our own look exactly when nothing is set.
 */
const logos = writeLogos()
const BRAND = {
  BRAND_NAME: 'Acme Accounts',
  BRAND_LOGO: logos.svg,
  BRAND_ACCENT: '#8a1c4a',
  BRAND_SUPPORT_URL: 'mailto:help@acme.example',
  BRAND_TERMS_URL: 'https://acme.example/terms',
  BRAND_PRIVACY_URL: 'https://acme.example/privacy?from=login&lang=en',
}
let branded: TestApp
let plain: TestApp
beforeAll(async () => {
  branded = await buildTestApp({ env: { ...GENEROUS_LIMITS, ...BRAND } })
  plain = await buildTestApp({ env: GENEROUS_LIMITS })
})
afterAll(async () => {
  await branded?.close()
  await plain?.close()
  rmSync(logos.dir, { recursive: true, force: true })
})

const logoPath = () => branded.config.brand.logo!.path

/** What every branded page carries: title suffix, header name and logo, icon, footer links. */
function expectBranded(body: string, title: string) {
  expect(body).toContain(`<title>${title} · Acme Accounts</title>`)
  expect(body).toContain(
    `<img class="brand-logo" src="${logoPath()}" alt="Acme Accounts" width="64" height="64" /><span aria-hidden="true">Acme Accounts</span>`,
  )
  expect(body).toContain(`<link rel="icon" href="${logoPath()}" type="image/svg+xml" />`)
  expect(body).toMatch(
    /<footer class="site">\s*<nav aria-label="Help and legal">\s*<ul class="brand-links">\s*<li><a href="mailto:help@acme.example">Contact support<\/a><\/li><li><a href="https:\/\/acme.example\/terms">Terms of service<\/a><\/li><li><a href="https:\/\/acme.example\/privacy\?from=login&amp;lang=en">Privacy policy<\/a><\/li>/,
  )
  expect(body).not.toMatch(/linkauth/i)
}

describe('a branded server', () => {
  it('shows the brand on the sign-in page, in its heading and sentences too', async () => {
    const { client } = await seed(branded)
    const browser = new Browser(branded.app)
    const started = await browser.get(
      authorizeUrl({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: 'https://app.example/callback',
        scope: 'links:read',
        state: 's',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }),
    )
    const login = await browser.get(String(started.headers.location))
    expect(login.statusCode).toBe(200)
    expectBranded(login.body, 'Sign in')
    expect(login.body).toContain('<h1 id="title">Sign in to Acme Accounts</h1>')
    expect(login.body).toContain('Acme Accounts checks your password; Link App never sees it.')
  })

  it('shows it on the consent page and on a failed sign-in (a POST, its body read before the handler)', async () => {
    const { email, params } = await seed(branded)
    const browser = new Browser(branded.app)
    const started = await browser.get(authorizeUrl(params))
    const requestId = new URL(String(started.headers.location), 'http://x').searchParams.get('request')!
    const failed = await browser.signIn(email, 'not the password', requestId)
    expect(failed.statusCode).toBe(400)
    expectBranded(failed.body, 'Sign in')
    await browser.signIn(email, PASSWORD, requestId)
    const consent = await browser.get(`/oauth/authorize/continue?request=${requestId}`)
    expect(consent.statusCode).toBe(200)
    expectBranded(consent.body, 'Allow Link App?')
  })

  it('shows it on error pages: a 404, and a form the server cannot read', async () => {
    const missing = await branded.app.inject({ method: 'GET', url: '/no/such/page' })
    expect(missing.statusCode).toBe(404)
    expectBranded(missing.body, 'Page not found')
    const unreadable = await branded.app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'x'.repeat(200 * 1024),
    })
    expect(unreadable.statusCode).toBe(413)
    expect(unreadable.body).toContain('· Acme Accounts</title>')
  })

  it('serves the stylesheet with the accent as the primary colour, light and dark', async () => {
    const css = await branded.app.inject({ method: 'GET', url: '/static/style.css' })
    expect(css.statusCode).toBe(200)
    const { light, dark } = branded.config.brand.palette
    expect(css.body).toContain(
      `:root { --primary: #8a1c4a; --primary-hover: ${light!.hover}; --primary-text: #ffffff; --focus: #8a1c4a;`,
    )
    expect(css.body).toMatch(
      new RegExp(`@media \\(prefers-color-scheme: dark\\) \\{ :root \\{ --primary: ${dark!.primary};`),
    )
    // After our own rules, so that it wins.
    expect(css.body.indexOf('--primary: #8a1c4a')).toBeGreaterThan(css.body.indexOf('--primary: #0b5cd5'))
  })

  it('serves the logo at its hashed path: its type, a year of caching, an SVG that can run nothing', async () => {
    const res = await branded.app.inject({ method: 'GET', url: logoPath() })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('image/svg+xml')
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    )
    expect(res.body).toBe(ACME_SVG)
    const again = await branded.app.inject({
      method: 'GET',
      url: logoPath(),
      headers: { 'if-none-match': String(res.headers.etag) },
    })
    expect(again.statusCode).toBe(304)
    expect((await branded.app.inject({ method: 'GET', url: '/static/brand-logo.svg' })).statusCode).toBe(404)
  })

  it('serves a PNG logo as image/png under the pages’ own CSP, at the size the header reserves', async () => {
    const t = await buildTestApp({ env: { BRAND_LOGO: logos.png } })
    try {
      const logo = t.config.brand.logo!
      const res = await t.app.inject({ method: 'GET', url: logo.path })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('image/png')
      expect(res.headers['content-security-policy']).toContain("default-src 'none'")
      expect(res.headers['content-security-policy']).not.toContain('sandbox')
      expect(res.rawPayload.equals(logo.body)).toBe(true)
      const login = await t.app.inject({ method: 'GET', url: '/login' })
      expect(login.body).toContain(
        `<img class="brand-logo" src="${logo.path}" alt="linkauth" width="32" height="32" />`,
      )
    } finally {
      await t.close()
    }
  })

  it('keeps the pages’ CSP as strict as without a brand: nothing from another origin', async () => {
    const [a, b] = await Promise.all(
      [branded, plain].map((t) => t.app.inject({ method: 'GET', url: '/login' })),
    )
    expect(a!.headers['content-security-policy']).toBe(b!.headers['content-security-policy'])
    expect(a!.headers['content-security-policy']).toContain("img-src 'self' data:")
    expect(a!.headers['content-security-policy']).toContain("default-src 'none'")
  })

  it('refuses a self-registered app named like the brand, or a look-alike of it', async () => {
    for (const name of ['Acme Accounts', 'ACME ACCOUNTS', 'Acme Acc\u03bfunts', 'linkauth']) {
      const res = await branded.app.inject({
        method: 'POST',
        url: '/api/oauth/register',
        payload: { client_name: name, redirect_uris: ['https://phish.example/cb'] },
      })
      expect(res.statusCode, name).toBe(400)
      expect(res.json().error_description).toMatch(/(client_name is reserved|mix scripts).*UTS #39/)
    }
    const own = await plain.app.inject({
      method: 'POST',
      url: '/api/oauth/register',
      payload: { client_name: 'Acme Accounts', redirect_uris: ['https://acme-app.example/cb'] },
    })
    expect(own.statusCode).toBe(201)
  })

  it('names passkeys after the brand', () => {
    expect(branded.services.passkeys.relyingParty.name).toBe('Acme Accounts')
    expect(plain.services.passkeys.relyingParty.name).toBe('linkauth')
  })
})

describe('a server without a brand', () => {
  it('looks exactly as before: our name and mark, no help or legal links, no icon link, our stylesheet', async () => {
    const login = await plain.app.inject({ method: 'GET', url: '/login' })
    expect(login.body).toContain('<title>Sign in · linkauth</title>')
    expect(login.body).toContain(
      '<span class="brand"><span class="mark" aria-hidden="true"></span>linkauth</span>',
    )
    expect(login.body).toContain('<link rel="stylesheet" href="/static/style.css" />\n')
    // The footer holds the language menu alone.
    expect(login.body).toContain('</main>\n')
    expect(login.body).not.toContain('brand-links')
    expect(login.body.match(/<footer/g)).toHaveLength(1)
    const { STYLESHEET } = await import('../../src/web/style.js')
    expect((await plain.app.inject({ method: 'GET', url: '/static/style.css' })).body).toBe(STYLESHEET)
  })
})
