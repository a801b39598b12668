import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { randomToken } from '../lib/secrets.js'
import type { SessionService, SignInSession } from './session.service.js'

/** Cookie names and flags follow the issuer: on https, Secure and the __Host- prefix (no Domain, Path=/). */
export function sessionCookies(config: Pick<Config, 'issuer' | 'sessionTtl'>) {
  const secure = config.issuer.startsWith('https://')
  const prefix = secure ? '__Host-' : ''
  const base = { httpOnly: true, sameSite: 'lax' as const, path: '/', secure }
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
     * Sign-in CSRF (there is no session yet to bind to): a random value in a cookie that the form
     * must repeat. A cross-site page can neither read the cookie nor set it.
     */
    loginCsrfToken(request: FastifyRequest, reply: FastifyReply): string {
      const existing = request.cookies[loginCsrf]
      if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing
      const token = randomToken()
      reply.setCookie(loginCsrf, token, { ...base, maxAge: 3600 })
      return token
    },
    loginCsrfCookie(request: FastifyRequest): string | undefined {
      return request.cookies[loginCsrf]
    },
  }
}

export type SessionCookies = ReturnType<typeof sessionCookies>
