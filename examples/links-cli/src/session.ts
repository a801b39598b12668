/**
 * Calls to the links API with the kept tokens. The access token is refreshed when it has expired (or
 * is about to) and when the API answers 401 invalid_token (revoked, or a clock apart), then the
 * call is made once more. Refresh tokens rotate: the new one replaces the old in session.json at
 * once (atomically), since the old one no longer works. A refresh refused with invalid_grant means
 * the sign-in is over (revoked on the connected-apps page, or expired): the session is forgotten.
 */
import { type Answer, CliFailure, describe, EXIT, oauthError, request } from './http.js'
import { sessionOf } from './login.js'
import type { SessionFile, Store } from './store.js'

/** Refresh this long before the access token's expiry, so it does not expire on the way. */
const EARLY_MS = 30_000

export const LOGIN_AGAIN = 'Run login again (npm run links-cli -- login).'

export function currentSession(store: Store): SessionFile {
  const session = store.readSession()
  if (!session)
    throw new CliFailure('Not signed in. Run login first (npm run links-cli -- login).', EXIT.NOT_SIGNED_IN)
  return session
}

export async function refresh(store: Store, session: SessionFile): Promise<SessionFile> {
  if (!session.refresh_token) {
    store.forgetSession()
    throw new CliFailure(`The sign-in has expired. ${LOGIN_AGAIN}`, EXIT.NOT_SIGNED_IN)
  }
  const answer = await request(session.token_endpoint, {
    form: {
      grant_type: 'refresh_token',
      refresh_token: session.refresh_token,
      client_id: session.client_id,
      resource: session.resource,
    },
  })
  if (answer.status !== 200) {
    if (oauthError(answer) === 'invalid_grant') {
      store.forgetSession()
      throw new CliFailure(
        `The sign-in is no longer valid (revoked, or unused for too long). ${LOGIN_AGAIN}`,
        EXIT.NOT_SIGNED_IN,
      )
    }
    throw new CliFailure(`Could not refresh the access token: ${describe(answer)}`)
  }
  const renewed = sessionOf(
    {
      api: session.api,
      resource: session.resource,
      server: {
        issuer: session.issuer,
        token_endpoint: session.token_endpoint,
        revocation_endpoint: session.revocation_endpoint,
      },
    },
    session.client_id,
    answer,
    session,
  )
  store.writeSession(renewed)
  return renewed
}

const invalidToken = (answer: Answer) =>
  answer.status === 401 && /error="invalid_token"/.test(answer.headers.get('www-authenticate') ?? '')

/** A call to the links API (`path` under its base URL) with a fresh access token. */
export async function callApi(store: Store, method: string, path: string, json?: unknown): Promise<Answer> {
  let session = currentSession(store)
  if (Date.now() >= session.access_token_expires_at - EARLY_MS) session = await refresh(store, session)
  const call = (token: string) => request(`${session.api}${path}`, { method, json, token })
  let answer = await call(session.access_token)
  if (invalidToken(answer)) {
    session = await refresh(store, session)
    answer = await call(session.access_token)
  }
  if (answer.status === 401)
    throw new CliFailure(
      `The links API refused the token: ${describe(answer)}. ${LOGIN_AGAIN}`,
      EXIT.NOT_SIGNED_IN,
    )
  if (answer.status === 403) throw new CliFailure(`Not allowed: ${describe(answer)}`)
  return answer
}

/** `logout`: revoke the refresh token (RFC 7009; its whole family with it), then forget the session. */
export async function logout(store: Store): Promise<string> {
  const session = store.readSession()
  if (!session) return 'Not signed in; nothing to do.'
  if (session.refresh_token && session.revocation_endpoint) {
    const answer = await request(session.revocation_endpoint, {
      form: { token: session.refresh_token, token_type_hint: 'refresh_token', client_id: session.client_id },
    })
    // RFC 7009 §2.2: 200 whether or not the token was still valid.
    if (answer.status !== 200)
      throw new CliFailure(`Could not revoke the sign-in (${describe(answer)}); kept it, try again.`)
  }
  store.forgetSession()
  return `Signed out: the sign-in at ${session.issuer} is revoked and ${store.path('session.json')} is deleted.`
}
