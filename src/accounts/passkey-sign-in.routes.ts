import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { uiOf } from '../web/i18n/language.routes.js'
import type { Config } from '../config.js'
import { ProblemError } from '../errors.js'
import { formField } from '../input/form-field.js'
import { constantTimeEqual } from '../lib/secrets.js'
import { signInPage } from '../web/pages/sign-in.page.js'
import { allowFormRedirectTo, allowOwnScript } from '../web/security-headers.js'
import { PasskeyRefusal, type PasskeyService } from './passkey.service.js'
import { returnPath } from './return-path.js'
import { knownDeviceCookie, type SessionCookies, sessionCookies } from './session-cookie.js'
import { completeSignIn, pendingWithClient } from './sign-in-completion.js'
import type { AuthorizeService } from '../oauth/authorize.service.js'
import type { ClientService } from '../clients/client.service.js'
import type { Metrics } from '../metrics/metrics.js'
import type { PasskeyResetService } from './passkey-reset.service.js'
import type { SessionService } from './session.service.js'
import type { SignInThrottle } from './sign-in-throttle.service.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface PasskeySignInServices {
  sessions: SessionService
  authorize: AuthorizeService
  clients: ClientService
  passkeys: PasskeyService
  passkeyResets: PasskeyResetService
  signInThrottle: SignInThrottle
  metrics: Metrics
}

/**
 * The browser's pre-session: the sign-in CSRF cookie (random, HttpOnly, SameSite=Lax), which the
 * sender must also repeat (form field or X-CSRF-Token header). Sign-in challenges are bound to it,
 * so a challenge handed to one browser cannot be answered from another.
 */
export function preSessionOf(cookies: SessionCookies, request: FastifyRequest, sent: unknown): string {
  // The sign-in CSRF token is an HMAC of the pre-session id (session-cookie.ts): one per browser.
  const expected = cookies.expectedLoginCsrf(request)
  if (!expected || typeof sent !== 'string' || !constantTimeEqual(expected, sent))
    throw new ProblemError(403, 'The sign-in form has expired. Reload the page and try again.')
  return expected
}

/**
 * Signing in with a passkey: POST /api/passkeys/sign-in-options hands the sign-in page's script a
 * challenge (problem details on error; /api/passkeys/reset-options the same for a reset link's page), and POST /login/passkey takes the assertion in a form and
 * ends like the password form: a session, then the authorization request or the page it was for.
 */
export function passkeySignInRoutes(
  services: PasskeySignInServices,
  config: Pick<Config, 'issuer' | 'sessionTtl' | 'cookieSecret' | 'knownDeviceTtl'>,
) {
  const cookies = sessionCookies(config)
  const devices = knownDeviceCookie(config)

  const api = async (app: FastifyInstance) => {
    app.post('/api/passkeys/sign-in-options', async (request, reply) => {
      const preSession = preSessionOf(cookies, request, request.headers['x-csrf-token'])
      reply.header('cache-control', 'no-store')
      return services.passkeys.signInOptions(preSession)
    })

    // The reset page of a passwordless account: a registration challenge bound to its link and browser.
    app.post('/api/passkeys/reset-options', async (request, reply) => {
      const preSession = preSessionOf(cookies, request, request.headers['x-csrf-token'])
      reply.header('cache-control', 'no-store')
      const options = await services.passkeyResets.options(formField(request.body, 'token'), preSession)
      if (!options) throw new ProblemError(404, 'This link no longer works. Ask for a new one.')
      return options
    })
  }

  const pages = async (app: FastifyInstance) => {
    app.post('/login/passkey', async (request, reply) => {
      const body = request.body
      const preSession = preSessionOf(cookies, request, formField(body, 'csrf_token'))
      const { pending, app } = await pendingWithClient(services, formField(body, 'request'))
      if (pending) allowFormRedirectTo(reply, pending.redirectUri)
      const nextKey = formField(body, 'next')
      const next = pending ? undefined : returnPath(nextKey)
      let user
      try {
        user = await services.passkeys.verifySignIn(preSession, formField(body, 'response'), request)
      } catch (err) {
        if (!(err instanceof PasskeyRefusal)) throw err
        allowOwnScript(reply)
        return sendPage(
          reply,
          signInPage(uiOf(request, pending?.uiLocale), {
            csrfToken: preSession,
            requestId: pending?.id,
            app,
            next: next && nextKey,
            passkeys: true,
            passkeyFailed: true,
            unknownPasskey: err.unknownCredentialId
              ? { credentialId: err.unknownCredentialId, rpId: services.passkeys.relyingParty.id }
              : undefined,
          }),
          400,
        )
      }
      const opened = await services.sessions.openSession(user, 'passkey', request)
      // This browser proved the account: it is a known device of it, as after a password sign-in.
      const account = services.signInThrottle.accountOf(user.email)
      devices.remember(reply, account, devices.deviceFor(request, account))
      return completeSignIn(services, cookies, request, reply, {
        token: opened.token,
        sessionId: opened.session.id,
        pendingId: pending?.id,
        next,
      })
    })
  }

  return { api, pages }
}

function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body)
}
