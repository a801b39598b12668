import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Config } from '../config.js'
import { ProblemError } from '../errors.js'
import { answerHeldBack } from './held-back.js'
import { isShortId } from '../lib/identifiers.js'
import { constantTimeEqual } from '../lib/secrets.js'
import { clientAddress } from '../rate-limit/client-address.js'
import { csrfToken, isValidCsrfToken, LOGOUT_BINDING } from '../web/csrf.js'
import { formField } from '../input/form-field.js'
import { uiOf } from '../web/i18n/language.routes.js'
import { signedInPage, signInPage } from '../web/pages/sign-in.page.js'
import { allowFormRedirectTo, allowOwnScript } from '../web/security-headers.js'
import { returnPath } from './return-path.js'
import { completeSignIn, pendingWithClient as pendingOf } from './sign-in-completion.js'
import { knownDeviceCookie, sessionCookies } from './session-cookie.js'
import type { SignInClient, SignInThrottle } from './sign-in-throttle.service.js'
import type { AuditService } from '../audit/audit.service.js'
import type { AuthorizeService } from '../oauth/authorize.service.js'
import type { ClientService } from '../clients/client.service.js'
import type { Metrics } from '../metrics/metrics.js'
import type { PasskeyService } from './passkey.service.js'
import type { SessionService } from './session.service.js'

function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  // Pages carry CSRF tokens or personal data: never cache them.
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body)
}

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface SignInServices {
  sessions: SessionService
  authorize: AuthorizeService
  clients: ClientService
  metrics: Metrics
  signInThrottle: SignInThrottle
  audit: AuditService
  passkeys: PasskeyService
}

/**
 * GET/POST /login and POST /logout. With `request` (a pending authorization id) a successful
 * sign-in continues that request; with `next` (a key of return-path.ts, e.g. account-apps) it goes
 * to that fixed page; otherwise it lands on /login itself, which then says who is signed in. No URL
 * is ever taken from the request, so there is no open redirect.
 */
export function signInRoutes(
  services: SignInServices,
  config: Pick<Config, 'issuer' | 'sessionTtl' | 'cookieSecret' | 'knownDeviceTtl'>,
) {
  const cookies = sessionCookies(config)
  const devices = knownDeviceCookie(config)

  const pendingWithClient = (requestId: string | undefined) => pendingOf(services, requestId)

  return async (app: FastifyInstance) => {
    app.get('/login', async (request, reply) => {
      const requestId = formField(request.query, 'request')
      const { pending, app } = await pendingWithClient(requestId)
      const next = pending ? undefined : returnPath(formField(request.query, 'next'))
      if (!pending) {
        const session = await cookies.currentSession(request, services.sessions)
        if (session && next) return reply.header('cache-control', 'no-store').redirect(next, 303)
        if (session) {
          const logoutCsrfToken = csrfToken(session.csrfSecret, LOGOUT_BINDING)
          return sendPage(reply, signedInPage(uiOf(request), { email: session.email, logoutCsrfToken }))
        }
      } else {
        allowFormRedirectTo(reply, pending.redirectUri)
      }
      if (services.passkeys.enabled) allowOwnScript(reply)
      const token = cookies.loginCsrfToken(request, reply)
      return sendPage(
        reply,
        signInPage(uiOf(request, pending?.uiLocale), {
          csrfToken: token,
          requestId: pending?.id,
          app,
          next: next && formField(request.query, 'next'),
          passkeys: services.passkeys.enabled,
        }),
      )
    })

    app.post('/login', async (request, reply) => {
      const body = request.body
      const expected = cookies.expectedLoginCsrf(request)
      const sent = formField(body, 'csrf_token')
      if (!expected || !sent || !constantTimeEqual(expected, sent)) {
        throw new ProblemError(403, 'The sign-in form has expired. Reload the page and try again.')
      }
      const { pending, app } = await pendingWithClient(formField(body, 'request'))
      if (pending) allowFormRedirectTo(reply, pending.redirectUri)
      if (services.passkeys.enabled) allowOwnScript(reply)
      const nextKey = formField(body, 'next')
      const next = pending ? undefined : returnPath(nextKey)
      const email = formField(body, 'email') ?? ''
      const formPage = (alert: { failed: true } | { retryAfterSeconds: number }) =>
        signInPage(uiOf(request, pending?.uiLocale), {
          csrfToken: expected,
          requestId: pending?.id,
          app,
          next: next && nextKey,
          email,
          passkeys: services.passkeys.enabled,
          ...alert,
        })

      // Held back before the password is checked; the same for every email, existing or not.
      const account = services.signInThrottle.accountOf(email)
      const deviceId = devices.deviceFor(request, account)
      const client: SignInClient = deviceId ? { device: deviceId } : { address: clientAddress(request) }
      const result = await services.sessions.signIn(email, formField(body, 'password') ?? '', client, request)
      if ('held' in result) {
        const wait = answerHeldBack(reply, services.metrics.rateLimited, result.held)
        return sendPage(reply, formPage({ retryAfterSeconds: wait }), 429)
      }
      if ('refused' in result) {
        services.metrics.signInFailures.inc()
        // One message and one status for unknown email and wrong password: no user enumeration.
        return sendPage(reply, formPage({ failed: true }), 400)
      }
      devices.remember(reply, account, deviceId)
      return completeSignIn(services, cookies, request, reply, {
        token: result.token,
        sessionId: result.session.id,
        pendingId: pending?.id,
        next,
      })
    })

    app.post('/logout', async (request, reply) => {
      const session = await cookies.currentSession(request, services.sessions)
      const requestId = formField(request.body, 'request')
      const next = isShortId(requestId) ? `/login?request=${requestId}` : '/login'
      if (session) {
        if (!isValidCsrfToken(session.csrfSecret, LOGOUT_BINDING, formField(request.body, 'csrf_token'))) {
          throw new ProblemError(403, 'The sign-out form has expired. Reload the page and try again.')
        }
        await services.sessions.signOut(session.id)
      }
      cookies.clearSession(reply)
      return reply.redirect(next, 303)
    })
  }
}
