import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { TestApp } from '../helpers/app.js'
import { CHALLENGE } from '../helpers/browser.js'

/** What the tests of default scopes (default-scopes*.test.ts) share: their requests and readings. */

export const REDIRECT = 'https://agent.example/callback'

/** An authorization request of `clientId`; `scope` only when given. */
export const request = (clientId: string, extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT,
  state: 'st',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  ...extra,
})

/** The scopes the consent page lists, as their codes. */
export function consentScopes(page: LightMyRequestResponse): string[] {
  expect(page.statusCode, page.body.slice(0, 300)).toBe(200)
  const list = /<ul class="scopes"[^>]*>([\s\S]*?)<\/ul>/.exec(page.body)![1]!
  return [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]!)
}

export async function register(app: TestApp, body: Record<string, unknown>) {
  const res = await app.app.inject({
    method: 'POST',
    url: '/api/oauth/register',
    payload: { client_name: 'Agent', redirect_uris: [REDIRECT], ...body },
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json() as { client_id: string; scope: string; registration_access_token: string }
}
