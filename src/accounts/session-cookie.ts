import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { isBase64url256Bits, isShortId, newSecret, newShortId } from '../lib/identifiers.js'
import { csrfToken } from '../web/csrf.js'
import type { SessionService, SignInSession } from './session.service.js'

/** Cookie names and flags follow the issuer: on https, Secure and the __Host- prefix (no Domain, Path=/). */
function cookieBase(issuer: string) {
  const secure = issuer.startsWith('https://')
  return {
    prefix: secure ? '__Host-' : '',
    base: { httpOnly: true, sameSite: 'lax' as const, path: '/', secure },
  }
}

export function sessionCookies(config: Pick<Config, 'issuer' | 'sessionTtl' | 'cookieSecret'>) {
  const { prefix, base } = cookieBase(config.issuer)
  // Without COOKIE_SECRET (main.ts always has one) a secret of this process: tokens work here only.
  const loginCsrfSecret = config.cookieSecret ?? newSecret()
  const loginCsrfOf = (preSession: string) => csrfToken(loginCsrfSecret, `login:${preSession}`)
  const session = `${prefix}linkauth_session`
  const loginCsrf = `${prefix}linkauth_login_csrf`

  return {
    sessionCookieName: session,
    loginCsrfCookieName: loginCsrf,

    async currentSession(
      request: FastifyRequest,
      sessions: SessionService,
    ): Promise<SignInSession | undefined> {
      return sessions.findSession(request.cookies[session])
    },
    setSession(reply: FastifyReply, token: string): void {
      reply.setCookie(session, token, { ...base, maxAge: config.sessionTtl })
    },
    clearSession(reply: FastifyReply): void {
      reply.clearCookie(session, base)
    },

    /**
     * Sign-in CSRF (there is no session yet to bind to): a random pre-session id in a cookie, and in
     * the form an HMAC of it under COOKIE_SECRET. A cross-site page can neither read the cookie nor
     * set it on https (__Host-); where it can plant a cookie (an http issuer, a sibling host) it still
     * cannot make the field that fits its value without the server's secret.
     */
    loginCsrfToken(request: FastifyRequest, reply: FastifyReply): string {
      const existing = request.cookies[loginCsrf]
      if (existing && isBase64url256Bits(existing)) return loginCsrfOf(existing)
      const preSession = newSecret()
      reply.setCookie(loginCsrf, preSession, { ...base, maxAge: 3600 })
      return loginCsrfOf(preSession)
    },
    /** The CSRF token a sign-in form posted with this request's cookie must carry; undefined without one. */
    expectedLoginCsrf(request: FastifyRequest): string | undefined {
      const preSession = request.cookies[loginCsrf]
      return preSession && isBase64url256Bits(preSession) ? loginCsrfOf(preSession) : undefined
    },
  }
}

export type SessionCookies = ReturnType<typeof sessionCookies>

/**
 * The known-device cookie (OWASP's "device cookie"): set at a successful sign-in, signed with
 * COOKIE_SECRET and bound to the account signed in to, so a browser that signed in to an account
 * before keeps its own sign-in limit for it, apart from the limit for every other client.
 */
export function knownDeviceCookie(config: Pick<Config, 'issuer' | 'cookieSecret' | 'knownDeviceTtl'>) {
  const { prefix, base } = cookieBase(config.issuer)
  const name = `${prefix}linkauth_device`
  return {
    name,
    /** This browser's device id for `account`, or undefined (no cookie, forged, or another account's). */
    deviceFor(request: FastifyRequest, account: string): string | undefined {
      const raw = request.cookies[name]
      if (!raw || !config.cookieSecret) return undefined
      const { valid, value } = request.unsignCookie(raw)
      if (!valid || !value) return undefined
      const dot = value.lastIndexOf('.')
      const id = value.slice(dot + 1)
      return dot > 0 && value.slice(0, dot) === account && isShortId(id) ? id : undefined
    },
    /** Marks this browser as a known device of `account` (keeping its id when it has one). */
    remember(reply: FastifyReply, account: string, deviceId?: string): void {
      if (!config.cookieSecret) return // nothing to sign with: every client is an unknown one
      const value = `${account}.${deviceId ?? newShortId()}`
      reply.setCookie(name, value, { ...base, maxAge: config.knownDeviceTtl, signed: true })
    },
  }
}
