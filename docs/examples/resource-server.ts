/**
 * A resource API checking linkauth access tokens locally with jose (npm install jose): no call to
 * linkauth per request, only the key set, fetched and cached by createRemoteJWKSet.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose'

export interface AccessTokenClaims extends JWTPayload {
  sub: string // the user id
  client_id: string // the application acting for the user
  scope: string // space-separated scopes
  jti: string
}

export function accessTokenVerifier(options: { issuer: string; audience: string }) {
  const keys = createRemoteJWKSet(new URL(`${options.issuer}/.well-known/jwks.json`))

  /**
   * The claims of a valid token from `Authorization: Bearer <token>` that carries `scope`, or
   * null: then answer 401 with `WWW-Authenticate: Bearer error="invalid_token"` (or 403 with
   * error="insufficient_scope" when only the scope is missing).
   */
  return async function verify(authorization: string | undefined, scope: string) {
    const token = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(authorization ?? '')?.[1]
    if (!token) return { ok: false as const, status: 401, error: 'invalid_token' }
    try {
      const { payload } = await jwtVerify<AccessTokenClaims>(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        typ: 'at+jwt',
        algorithms: ['ES256', 'EdDSA', 'RS256'],
      })
      if (!payload.scope.split(' ').includes(scope))
        return { ok: false as const, status: 403, error: 'insufficient_scope' }
      return { ok: true as const, claims: payload }
    } catch (err) {
      if (err instanceof errors.JOSEError) return { ok: false as const, status: 401, error: 'invalid_token' }
      throw err
    }
  }
}
