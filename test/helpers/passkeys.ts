import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { Browser, hiddenField } from './browser.js'
import { assertionResponse, type SoftCredential } from './software-authenticator.js'

/**
 * What the passkey tests over app.inject share: buildTestApp's issuer (http://localhost:3000), for
 * which the software authenticator signs, and the sign-in page's ceremony as its script runs it.
 */

export const PASSKEY_ORIGIN = 'http://localhost:3000'
export const PASSKEY_RP_ID = 'localhost'

/** A fresh browser's sign-in page (optionally for an authorization request) and a sign-in challenge. */
export async function signInChallenge(app: FastifyInstance, requestId?: string) {
  const browser = new Browser(app)
  const page = await browser.get(requestId ? `/login?request=${requestId}` : '/login')
  const csrf = hiddenField(page.body, 'csrf_token')
  const res = await browser.postJson('/api/passkeys/sign-in-options', csrf)
  expect(res.statusCode).toBe(200)
  return { browser, csrf, challenge: res.json().challenge as string, options: res.json() }
}

/** POST /login/passkey with an assertion (the form the page's script submits). */
export const postAssertion = (
  browser: Browser,
  csrf: string,
  response: string,
  extra: Record<string, string> = {},
) => browser.post('/login/passkey', { csrf_token: csrf, response, ...extra })

/** Signs in with `credential` in a fresh browser, as the sign-in page does: the answer to the assertion. */
export async function passkeySignIn(app: FastifyInstance, credential: SoftCredential) {
  const c = await signInChallenge(app)
  return postAssertion(
    c.browser,
    c.csrf,
    assertionResponse(credential, c.challenge, { origin: PASSKEY_ORIGIN }),
  )
}
