import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { s256Challenge } from '../../src/lib/pkce.js'
import { TEST_ADMIN_TOKEN } from './app.js'
import { CookieJar, hiddenField } from './browser.js'

/**
 * The authorization code flow over real HTTP against running server processes, each step on the
 * base URL the test names (one instance, or a different one per step).
 */

export const FLOW_REDIRECT_URI = 'https://app.example/callback'
const PASSWORD = 'several instances, one database'

export interface HttpParty {
  clientId: string
  email: string
  password: string
  rs: { id: string; secret: string }
}

async function adminPost<T>(adminBase: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${adminBase}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

/** A client, a user and a resource server, registered through an admin API. */
export async function registerParty(adminBase: string): Promise<HttpParty> {
  const tag = randomBytes(4).toString('hex')
  const client = await adminPost<{ client_id: string }>(adminBase, '/admin/clients', {
    name: `App ${tag}`,
    redirect_uris: [FLOW_REDIRECT_URI],
  })
  const email = `party-${tag}@example.com`
  await adminPost(adminBase, '/admin/users', { email, password: PASSWORD })
  const rs = await adminPost<{ id: string; secret: string }>(adminBase, '/admin/resource-servers', {
    name: `API ${tag}`,
  })
  return { clientId: client.client_id, email, password: PASSWORD, rs }
}

/** A form POST (token, revocation, introspection), its status and JSON body. */
export async function postForm(base: string, path: string, params: Record<string, string>, auth?: string) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(auth ? { authorization: auth } : {}),
    },
    body: new URLSearchParams(params).toString(),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

/**
 * Authorize, the sign-in page, the sign-in, the consent page, Allow: five requests (four when the
 * consent is remembered), the n-th on `bases[n % bases.length]`. Returns the code and its verifier.
 */
export async function obtainCode(
  bases: readonly string[],
  party: HttpParty,
): Promise<{ code: string; verifier: string }> {
  const jar = new CookieJar()
  let step = 0
  const browse = async (path: string, form?: Record<string, string>) => {
    const res = await fetch(`${bases[step++ % bases.length]}${path}`, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        ...(jar.cookies.size ? { cookie: jar.header() } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    })
    jar.storeLines(res.headers.getSetCookie())
    return { status: res.status, location: res.headers.get('location') ?? '', body: await res.text() }
  }
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: party.clientId,
    redirect_uri: FLOW_REDIRECT_URI,
    scope: 'links:read',
    state: 'st',
    code_challenge: s256Challenge(verifier),
    code_challenge_method: 'S256',
  })
  const started = await browse(`/oauth/authorize?${query}`)
  expect(started.status).toBe(303)
  const login = await browse(started.location)
  expect(login.status).toBe(200)
  const signedIn = await browse('/login', {
    email: party.email,
    password: party.password,
    csrf_token: hiddenField(login.body, 'csrf_token'),
    request: hiddenField(login.body, 'request'),
  })
  expect(signedIn.status).toBe(303)
  const consent = await browse(signedIn.location)
  // Consent remembered from an earlier grant: straight back to the application with a code.
  if (consent.status === 302) return { code: new URL(consent.location).searchParams.get('code')!, verifier }
  expect(consent.status).toBe(200)
  const decided = await browse('/oauth/authorize', {
    request: hiddenField(consent.body, 'request'),
    csrf_token: hiddenField(consent.body, 'csrf_token'),
    decision: 'allow',
  })
  expect(decided.status).toBe(303)
  const code = new URL(decided.location).searchParams.get('code')
  expect(code).toBeTruthy()
  return { code: code!, verifier }
}

/** The code exchanged at `base`: the token response. */
export async function exchange(base: string, party: HttpParty, got: { code: string; verifier: string }) {
  return postForm(base, '/api/oauth/token', {
    grant_type: 'authorization_code',
    code: got.code,
    code_verifier: got.verifier,
    client_id: party.clientId,
    redirect_uri: FLOW_REDIRECT_URI,
  })
}
