import { randomBytes } from 'node:crypto'
import { s256Challenge } from '../../src/lib/pkce.js'
import { CookieJar, hiddenField } from './browser.js'
import { basicAuth } from './tokens.js'

/** One answer as a user agent saw it over HTTP. */
export interface Seen {
  method: string
  url: string
  status: number
  headers: Headers
  body: string
}

/**
 * Every secret value the whole flow handles, by name: what must never appear in a log line, and
 * never in a URL we produce (except `code`, in the redirect to the application).
 */
export type FlowSecrets = Record<string, string>

/**
 * Drives everything a deployment does, over real HTTP: the operator registers an application, a
 * user and a resource server; the user signs in (once with a wrong password), consents, and the
 * application exchanges the code, refreshes, introspects and revokes (also replaying the code and
 * sending tokens in a URL); the user lists and revokes connected applications on the page and
 * through the API, and signs out; the operator rotates keys and deletes the user.
 */
export async function runWholeFlow(
  base: string,
  adminBase: string,
  adminToken: string,
): Promise<{ secrets: FlowSecrets; seen: Seen[] }> {
  const seen: Seen[] = []
  const jar = new CookieJar()
  const http = async (
    url: string,
    init: {
      method?: string
      form?: Record<string, string>
      json?: unknown
      headers?: Record<string, string>
    } = {},
  ): Promise<Seen> => {
    const method = init.method ?? (init.form || init.json ? 'POST' : 'GET')
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: {
        ...(url.startsWith(base) && jar.cookies.size ? { cookie: jar.header() } : {}),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      body: init.form
        ? new URLSearchParams(init.form).toString()
        : init.json !== undefined
          ? JSON.stringify(init.json)
          : undefined,
    })
    if (url.startsWith(base)) jar.storeLines(res.headers.getSetCookie())
    const answer = { method, url, status: res.status, headers: res.headers, body: await res.text() }
    seen.push(answer)
    return answer
  }
  const expectStatus = (answer: Seen, status: number) => {
    if (answer.status !== status)
      throw new Error(
        `${answer.method} ${answer.url}: ${answer.status}, expected ${status}: ${answer.body.slice(0, 300)}`,
      )
    return answer
  }
  const json = <T>(answer: Seen) => JSON.parse(answer.body) as T
  const admin = { authorization: `Bearer ${adminToken}` }

  // The operator.
  const redirectUri = 'https://app.example/callback'
  const password = `pw ${randomBytes(9).toString('base64url')} +&%`
  const email = `flow-${randomBytes(4).toString('hex')}@example.com`
  const registerClient = async (name: string) =>
    json<{ client_id: string }>(
      expectStatus(
        await http(`${adminBase}/admin/clients`, {
          json: { name, redirect_uris: [redirectUri] },
          headers: admin,
        }),
        201,
      ),
    )
  const client = await registerClient('Flow App')
  const second = await registerClient('Second App')
  const user = json<{ id: string }>(
    expectStatus(await http(`${adminBase}/admin/users`, { json: { email, password }, headers: admin }), 201),
  )
  const rs = json<{ id: string; secret: string }>(
    expectStatus(
      await http(`${adminBase}/admin/resource-servers`, { json: { name: 'Links API' }, headers: admin }),
      201,
    ),
  )
  const rsAuthorization = basicAuth(rs.id, rs.secret)

  /** Authorize, sign in if needed, Allow: the code and the consent page's tokens. */
  const authorize = async (clientId: string, verifier: string) => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'links:read links:write',
      state: randomBytes(8).toString('hex'),
      code_challenge: s256Challenge(verifier),
      code_challenge_method: 'S256',
    })
    let answer = await http(`${base}/oauth/authorize?${query}`)
    const tokens: Record<string, string> = {}
    if (answer.status === 303 && answer.headers.get('location')!.startsWith('/login')) {
      const loginUrl = `${base}${answer.headers.get('location')}`
      const login = expectStatus(await http(loginUrl), 200)
      tokens.loginCsrf = hiddenField(login.body, 'csrf_token')
      const requestId = hiddenField(login.body, 'request')
      // A wrong password first: it must not reach a log line either.
      expectStatus(
        await http(`${base}/login`, {
          form: { email, password: `${password}-wrong`, csrf_token: tokens.loginCsrf, request: requestId },
        }),
        400,
      )
      answer = expectStatus(
        await http(`${base}/login`, {
          form: { email, password, csrf_token: tokens.loginCsrf, request: requestId },
        }),
        303,
      )
      answer = await http(`${base}${answer.headers.get('location')}`)
    }
    // Consent remembered: straight back to the application.
    if (answer.status === 302)
      return { code: new URL(answer.headers.get('location')!).searchParams.get('code')!, tokens }
    expectStatus(answer, 200)
    tokens.consentCsrf = hiddenField(answer.body, 'csrf_token')
    const decided = expectStatus(
      await http(`${base}/oauth/authorize`, {
        form: {
          request: hiddenField(answer.body, 'request'),
          csrf_token: tokens.consentCsrf,
          decision: 'allow',
        },
      }),
      303,
    )
    const code = new URL(decided.headers.get('location')!).searchParams.get('code')!
    return { code, tokens }
  }
  const token = async (params: Record<string, string>, status = 200) =>
    json<{ access_token: string; refresh_token: string }>(
      expectStatus(await http(`${base}/api/oauth/token`, { form: params }), status),
    )

  // The application: code, exchange, a replay, refresh, introspection, revocation.
  const verifier = randomBytes(40).toString('base64url')
  const first = await authorize(client.client_id, verifier)
  const issued = await token({
    grant_type: 'authorization_code',
    code: first.code,
    code_verifier: verifier,
    client_id: client.client_id,
    redirect_uri: redirectUri,
  })
  await token({ code: first.code, code_verifier: verifier, client_id: client.client_id }, 400) // replay
  const verifier2 = randomBytes(40).toString('base64url')
  const again = await authorize(client.client_id, verifier2)
  const live = await token({ code: again.code, code_verifier: verifier2, client_id: client.client_id })
  const refreshed = await token({
    grant_type: 'refresh_token',
    refresh_token: live.refresh_token,
    client_id: client.client_id,
  })
  for (const t of [refreshed.access_token, refreshed.refresh_token, issued.access_token])
    expectStatus(
      await http(`${base}/api/oauth/introspect`, {
        form: { token: t },
        headers: { authorization: rsAuthorization },
      }),
      200,
    )
  expectStatus(
    await http(`${base}/api/oauth/introspect`, {
      form: { token: refreshed.access_token },
      headers: { authorization: basicAuth(rs.id, `${rs.secret}x`) },
    }),
    401,
  )
  // Secrets where they do not belong: in the query string of a token request.
  await http(
    `${base}/api/oauth/token?code=${encodeURIComponent(first.code)}&refresh_token=${encodeURIComponent(refreshed.refresh_token)}&code_verifier=${verifier}`,
    { form: { client_id: client.client_id } },
  )
  expectStatus(
    await http(`${base}/api/oauth/revoke`, {
      form: { token: refreshed.access_token, token_type_hint: 'access_token', client_id: client.client_id },
    }),
    200,
  )

  // The user: connected applications on the page and through the API, then sign out.
  const verifier3 = randomBytes(40).toString('base64url')
  const third = await authorize(second.client_id, verifier3)
  const page = expectStatus(await http(`${base}/account/apps`), 200)
  const accountCsrf = hiddenField(page.body, 'csrf_token')
  const apiList = json<{ csrf_token: string }>(expectStatus(await http(`${base}/api/account/apps`), 200))
  expectStatus(
    await http(`${base}/account/apps/${client.client_id}/revoke`, { form: { csrf_token: accountCsrf } }),
    303,
  )
  expectStatus(
    await http(`${base}/api/account/apps/${second.client_id}`, {
      method: 'DELETE',
      headers: { 'x-csrf-token': apiList.csrf_token },
    }),
    204,
  )
  const signedIn = expectStatus(await http(`${base}/login`), 200)
  const logoutCsrf = hiddenField(signedIn.body, 'csrf_token')
  const sessionToken = jar.cookies.get('linkauth_session')!
  expectStatus(await http(`${base}/logout`, { form: { csrf_token: logoutCsrf } }), 303)
  expectStatus(
    await http(`${base}/api/oauth/revoke`, {
      form: { token: refreshed.refresh_token, client_id: client.client_id },
    }),
    200,
  )

  // The operator again.
  expectStatus(await http(`${adminBase}/admin/clients`, { headers: admin }), 200)
  expectStatus(await http(`${adminBase}/admin/keys/rotate`, { method: 'POST', headers: admin }), 201)
  expectStatus(
    await http(`${adminBase}/admin/users`, { headers: { authorization: 'Bearer wrong-token' } }),
    401,
  )
  expectStatus(await http(`${adminBase}/admin/users/${user.id}`, { method: 'DELETE', headers: admin }), 204)

  return {
    seen,
    secrets: {
      'admin token': adminToken,
      password,
      'wrong password': `${password}-wrong`,
      'resource-server secret': rs.secret,
      'resource-server Authorization header': rsAuthorization,
      'session cookie': sessionToken,
      'sign-in CSRF token': first.tokens.loginCsrf!,
      'consent CSRF token': first.tokens.consentCsrf!,
      'third consent CSRF token': third.tokens.consentCsrf!,
      'account CSRF token': accountCsrf,
      'account API CSRF token': apiList.csrf_token,
      'sign-out CSRF token': logoutCsrf,
      code: first.code,
      'second code': again.code,
      'third code': third.code,
      verifier,
      'second verifier': verifier2,
      'third verifier': verifier3,
      'access token': issued.access_token,
      'refresh token': issued.refresh_token,
      'rotated refresh token': live.refresh_token,
      'refreshed access token': refreshed.access_token,
      'refreshed refresh token': refreshed.refresh_token,
    },
  }
}

/** The forms a secret takes on the wire and in a log: as is, percent-encoded, form-encoded. */
export function spellings(secret: string): string[] {
  const encoded = encodeURIComponent(secret)
  return [
    ...new Set([
      secret,
      encoded,
      encoded.replace(/%20/g, '+'),
      new URLSearchParams({ x: secret }).toString().slice(2),
    ]),
  ]
}
