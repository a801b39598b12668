import { randomBytes } from 'node:crypto'
import { admin } from './flow.js'
import type { ScenarioOptions } from './scenario.js'
import type { BenchServer } from './server.js'

/**
 * The sign-in scenario's server: rate limits on, with the memory store (no REDIS_URL, even when the
 * bench's environment has one), and the per-address and per-account limits at their maximum, so that
 * every request takes the reserved-attempt path (issue 31 item 1) and none is answered 429. Older
 * builds read the same variables.
 */
export const SIGN_IN_SERVER_ENV: Record<string, string | undefined> = {
  RATE_LIMITS: 'true',
  REDIS_URL: undefined,
  SIGN_IN_RATE_LIMIT: '1000000',
  SIGN_IN_ACCOUNT_LIMIT: '1000000',
  SIGN_IN_FREE_FAILURES: '1000000',
}

export interface SignInForm {
  email: string
  password: string
  /** The sign-in page's cookies (its CSRF binding), sent back with every POST. */
  cookie: string
  csrfToken: string
}

/**
 * A user made through the admin API and one visit of the sign-in page: its cookies and CSRF token
 * stay valid for any number of POSTs (a browser that does not keep the session cookie it gets), on
 * this build and on builds from before the security review alike.
 */
export async function prepareSignIn(server: BenchServer): Promise<SignInForm> {
  const email = `bench-sign-in-${randomBytes(4).toString('hex')}@example.com`
  const password = 'bench sign-in password 123'
  await admin(server, '/admin/users', { email, password })
  const page = await fetch(`${server.baseUrl}/login`)
  if (!page.ok) throw new Error(`bench: GET /login answered ${page.status}`)
  const cookie = page.headers
    .getSetCookie()
    .map((line) => line.split(';')[0]!)
    .join('; ')
  const csrfToken = /name="csrf_token" value="([^"]*)"/.exec(await page.text())?.[1]
  if (!csrfToken) throw new Error('bench: no csrf_token on the sign-in page')
  return { email, password, cookie, csrfToken }
}

/** POST /login with the right password (303 to the signed-in page) or a wrong one (400, the form again). */
export function signInRequest(
  server: BenchServer,
  form: SignInForm,
  password: 'right' | 'wrong',
): ScenarioOptions {
  return {
    url: `${server.baseUrl}/login`,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
    body: new URLSearchParams({
      email: form.email,
      password: password === 'right' ? form.password : `${form.password} but wrong`,
      csrf_token: form.csrfToken,
    }).toString(),
  }
}
