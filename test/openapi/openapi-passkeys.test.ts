import { describe, expect, it } from 'vitest'
import { adminHeaders } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { t, check, uncheckedIn, useOpenApiApp } from './openapi-answers.js'

/**
 * The passkey operations of both listeners against their OpenAPI documents (see openapi-answers.ts).
 */
useOpenApiApp()

describe("passkey options and the operator's passkey API (issue 30)", () => {
  it('answers as documented', async () => {
    const s = await seed(t)
    const browser = new Browser(t.app)
    const login = await browser.get('/login')
    const preSession = hiddenField(login.body, 'csrf_token')
    const signIn = 'POST /api/passkeys/sign-in-options'
    const json = { 'content-type': 'application/json' }
    await check('public', signIn, { url: '/api/passkeys/sign-in-options', headers: json, payload: '{}' }, 403)
    await check(
      'public',
      signIn,
      {
        url: '/api/passkeys/sign-in-options',
        headers: { ...json, cookie: browser.jar.header(), 'x-csrf-token': preSession },
        payload: '{}',
      },
      200,
    )
    // A reset link's page: a passwordless account's link (the flag set directly: only it matters here).
    const reset = 'POST /api/passkeys/reset-options'
    const withPreSession = { ...json, cookie: browser.jar.header(), 'x-csrf-token': preSession }
    const resetUrl = '/api/passkeys/reset-options'
    await check('public', reset, { url: resetUrl, headers: json, payload: '{"token":"x"}' }, 403)
    await check('public', reset, { url: resetUrl, headers: withPreSession, payload: '{"token":"x"}' }, 404)
    const passwordless = await seed(t)
    await t.database.db
      .updateTable('users')
      .set({ password_sign_in: false })
      .where('id', '=', passwordless.user.id)
      .execute()
    const token = new URL((await t.services.users.issueResetLink(passwordless.user.id)).url).searchParams.get(
      'token',
    )
    await check(
      'public',
      reset,
      { url: resetUrl, headers: withPreSession, payload: JSON.stringify({ token }) },
      200,
    )
    await browser.signIn(s.email, PASSWORD)
    const page = await browser.get('/account/passkeys')
    const csrf = hiddenField(page.body, 'csrf_token')
    const signedIn = { ...json, cookie: browser.jar.header() }
    for (const [op, url] of [
      ['POST /api/account/passkeys/options', '/api/account/passkeys/options'],
      ['POST /api/account/passkeys/confirm-options', '/api/account/passkeys/confirm-options'],
    ] as const) {
      await check('public', op, { url, headers: signedIn, payload: '{}' }, 403)
      await check('public', op, { url, headers: { ...signedIn, 'x-csrf-token': csrf }, payload: '{}' }, 200)
    }
    const list = 'GET /admin/users/{id}/passkeys'
    await check('admin', list, { url: `/admin/users/${s.user.id}/passkeys`, headers: adminHeaders }, 200)
    await check('admin', list, { url: '/admin/users/nope/passkeys', headers: adminHeaders }, 400)
    await check(
      'admin',
      list,
      { url: '/admin/users/00000000-0000-4000-8000-000000000000/passkeys', headers: adminHeaders },
      404,
    )
    await check(
      'admin',
      'DELETE /admin/users/{id}/passkeys/{passkey_id}',
      {
        url: `/admin/users/${s.user.id}/passkeys/00000000-0000-4000-8000-000000000000`,
        headers: adminHeaders,
      },
      404,
    )
  })
})

describe('coverage', () => {
  it('every documented passkey operation of either listener that exists was checked against a real answer above', () => {
    expect(uncheckedIn('passkeys')).toEqual([])
  })
})
