import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, GENEROUS_LIMITS, type TestApp, type TestAppOptions } from '../helpers/app.js'
import { authorizeUrl, Browser, hiddenField, PASSWORD } from '../helpers/browser.js'

/**
 * What the tests of clients that arrive without the operator (dynamic registration, Client ID
 * Metadata Documents) start from, and the browser steps they take to a consent.
 */

/** A test app with GENEROUS_LIMITS (and `options.env`), and a user who signs in with PASSWORD. */
export async function appWithUser(
  emailPrefix: string,
  options: TestAppOptions = {},
): Promise<{ t: TestApp; email: string }> {
  const t = await buildTestApp({ ...options, env: { ...GENEROUS_LIMITS, ...options.env } })
  const email = `${emailPrefix}-${Math.random().toString(36).slice(2)}@example.com`
  await t.services.users.createUser({ email, password: PASSWORD })
  return { t, email }
}

/**
 * Starts an authorization request in `browser`, signs the user in and opens the page that follows:
 * the consent page, or an error page. When authorize does not send the browser to sign in, its own
 * answer is the page.
 */
export async function authorizeAndSignIn(
  t: TestApp,
  email: string,
  params: Record<string, string>,
  browser = new Browser(t.app),
): Promise<{ browser: Browser; page: LightMyRequestResponse }> {
  const started = await browser.get(authorizeUrl(params))
  if (started.statusCode !== 303) return { browser, page: started }
  const requestId = new URL(String(started.headers.location), 'http://x').searchParams.get('request')!
  await browser.signIn(email, PASSWORD, requestId)
  return { browser, page: await browser.get(`/oauth/authorize/continue?request=${requestId}`) }
}

/** The user allows on the consent page: the redirect that carries the code. */
export function allow(browser: Browser, page: { body: string }): Promise<LightMyRequestResponse> {
  return browser.post('/oauth/authorize', {
    request: hiddenField(page.body, 'request'),
    csrf_token: hiddenField(page.body, 'csrf_token'),
    decision: 'allow',
  })
}
