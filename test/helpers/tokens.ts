import { findRefreshTokenRecord, refreshTokenRefusal } from '../../src/grants/refresh-token.repository.js'
import { sha256 } from '../../src/lib/secrets.js'
import type { TestApp } from './app.js'

/** RFC 6749 §2.3.1: each part form-urlencoded, then base64 of "id:secret". */
export function basicAuth(id: string, secret: string): string {
  const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`
}

export interface ResourceServerCredentials {
  id: string
  secret: string
}

export async function createResourceServer(
  t: TestApp,
  name = 'Links API',
): Promise<ResourceServerCredentials> {
  const server = await t.services.resourceServers.createResourceServer({ name })
  return { id: server.id, secret: server.secret }
}

/** POST /api/oauth/introspect with Basic credentials (or an Authorization header as given). */
export function introspectRequest(
  t: TestApp,
  params: Record<string, string>,
  authorization: string | undefined,
  encoding: 'form' | 'json' = 'form',
) {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/introspect',
    headers: {
      ...(authorization === undefined ? {} : { authorization }),
      'content-type': encoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    },
    payload: encoding === 'form' ? new URLSearchParams(params).toString() : JSON.stringify(params),
  })
}

/** Introspects and returns the body, expecting 200. */
export async function introspect(
  t: TestApp,
  rs: ResourceServerCredentials,
  token: string,
): Promise<Record<string, unknown>> {
  const res = await introspectRequest(t, { token }, basicAuth(rs.id, rs.secret))
  if (res.statusCode !== 200) throw new Error(`introspection failed: ${res.statusCode} ${res.body}`)
  return res.json()
}

/** POST /api/oauth/revoke. */
export function revokeRequest(
  t: TestApp,
  params: Record<string, string>,
  encoding: 'form' | 'json' = 'form',
) {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/revoke',
    headers: {
      'content-type': encoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    },
    payload: encoding === 'form' ? new URLSearchParams(params).toString() : JSON.stringify(params),
  })
}

/**
 * Whether a refresh token is live now, by the rule the rotation statement encodes
 * (refreshTokenRefusal with no use). Introspection never says (it answers `{active: false}` for
 * every refresh token), so tests that follow a token's life ask the database through this.
 */
export async function refreshTokenIsLive(t: TestApp, token: string): Promise<boolean> {
  const record = await findRefreshTokenRecord(t.database.db, sha256(token))
  return !!record && refreshTokenRefusal(record, t.clock.now()) === undefined
}
