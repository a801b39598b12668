import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { ProblemError } from '../errors.js'
import { answerHeldBack } from './held-back.js'
import { formField } from '../input/form-field.js'
import { isUuid } from '../lib/identifiers.js'
import { clientAddress } from '../rate-limit/client-address.js'
import { ACCOUNT_PASSKEYS_BINDING, csrfToken, isValidCsrfToken } from '../web/csrf.js'
import { type PasskeyNotice, passkeysPage, PASSKEY_NOTICES } from '../web/pages/passkeys.page.js'
import { allowOwnScript } from '../web/security-headers.js'
import { uiOf } from '../web/i18n/language.routes.js'
import { accountFrame } from './account-frame.js'
import { PasskeyRefusal, passkeyName, type PasskeyService } from './passkey.service.js'
import { signInThenReturnTo } from './return-path.js'
import { knownDeviceCookie, sessionCookies } from './session-cookie.js'
import type { SignInSession, SessionService } from './session.service.js'
import type { SignInClient, SignInThrottle } from './sign-in-throttle.service.js'
import type { Metrics } from '../metrics/metrics.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface PasskeyAccountServices {
  sessions: SessionService
  passkeys: PasskeyService
  signInThrottle: SignInThrottle
  metrics: Metrics
}

const REGISTER_FAILED = 'No passkey was added: the browser or device did not complete it. Try again.'
const ALREADY_REGISTERED = 'This passkey is already registered.'
const NOT_FRESH = 'Confirm it is you first, then add the passkey.'
const BAD_NAME = 'Give the passkey a name of 1 to 64 characters.'
const CONFIRM_FAILED = 'That did not confirm it is you. Try again.'

const passkeyIdParam = (request: FastifyRequest) => {
  const id = (request.params as { id: string }).id
  if (!isUuid(id)) throw new ProblemError(404, 'No such passkey.')
  return id
}

/**
 * The Passkeys section of the account area: GET /account/passkeys lists them; adding one needs a
 * fresh check in this session (a sign-in, or the password or a passkey again, in the last five
 * minutes); rename and remove; the JSON options the page's script asks for under /api/account/.
 * Every change needs the session's CSRF token for this section.
 */
export function passkeyRoutes(
  services: PasskeyAccountServices,
  config: Pick<Config, 'issuer' | 'sessionTtl' | 'cookieSecret' | 'knownDeviceTtl'>,
) {
  const cookies = sessionCookies(config)
  const devices = knownDeviceCookie(config)
  const passkeys = services.passkeys

  async function requireSession(request: FastifyRequest, csrf: unknown): Promise<SignInSession> {
    if (!passkeys.enabled) throw new ProblemError(404, 'Passkeys are turned off on this server.')
    const session = await cookies.currentSession(request, services.sessions)
    if (!session) throw new ProblemError(403, 'Your session has ended. Sign in and try again.')
    if (!isValidCsrfToken(session.csrfSecret, ACCOUNT_PASSKEYS_BINDING, csrf))
      throw new ProblemError(403, 'This form has expired. Reload the page and try again.')
    return session
  }

  async function showPage(
    request: FastifyRequest,
    reply: FastifyReply,
    session: SignInSession,
    extra: {
      notice?: PasskeyNotice | undefined
      error?: string
      confirmError?: string
      retryAfterSeconds?: number
    } = {},
    status = 200,
  ) {
    allowOwnScript(reply)
    const body = passkeysPage({
      frame: accountFrame(session, 'passkeys', true, uiOf(request)),
      passkeys: await passkeys.list(session.userId),
      csrfToken: csrfToken(session.csrfSecret, ACCOUNT_PASSKEYS_BINDING),
      fresh: services.sessions.isFresh(session),
      ...extra,
    })
    return reply.code(status).type('text/html; charset=utf-8').send(body)
  }

  const neverCached = (app: FastifyInstance) =>
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store')
    })

  const pages = async (app: FastifyInstance) => {
    neverCached(app)

    app.get('/account/passkeys', async (request, reply) => {
      if (!passkeys.enabled) throw new ProblemError(404, 'Passkeys are turned off on this server.')
      const session = await cookies.currentSession(request, services.sessions)
      if (!session) return reply.redirect(signInThenReturnTo('account-passkeys'), 303)
      const done = formField(request.query, 'done')
      const notice = done && Object.hasOwn(PASSKEY_NOTICES, done) ? (done as PasskeyNotice) : undefined
      return showPage(request, reply, session, { notice })
    })

    app.post('/account/passkeys', async (request, reply) => {
      const session = await requireSession(request, formField(request.body, 'csrf_token'))
      if (!services.sessions.isFresh(session))
        return showPage(request, reply, session, { error: NOT_FRESH }, 403)
      const name = passkeyName(formField(request.body, 'name'))
      if (!name) return showPage(request, reply, session, { error: BAD_NAME }, 400)
      try {
        await passkeys.register(
          {
            userId: session.userId,
            binding: session.id,
            responseText: formField(request.body, 'response'),
            name,
          },
          request,
        )
      } catch (err) {
        if (!(err instanceof PasskeyRefusal)) throw err
        const error = err.reason === 'already_registered' ? ALREADY_REGISTERED : REGISTER_FAILED
        return showPage(request, reply, session, { error }, 400)
      }
      return reply.redirect('/account/passkeys?done=added', 303)
    })

    // A fresh check with the password: held back like sign-in, counted against the same account.
    app.post('/account/passkeys/confirm', async (request, reply) => {
      const session = await requireSession(request, formField(request.body, 'csrf_token'))
      const account = services.signInThrottle.accountOf(session.email)
      const deviceId = devices.deviceFor(request, account)
      const client: SignInClient = deviceId ? { device: deviceId } : { address: clientAddress(request) }
      const password = formField(request.body, 'password') ?? ''
      const checked = await services.sessions.verifyPasswordOf(session, password, client, request)
      if ('held' in checked) {
        const wait = answerHeldBack(reply, services.metrics.rateLimited, checked.held)
        return showPage(request, reply, session, { retryAfterSeconds: wait }, 429)
      }
      if (!checked.ok) return showPage(request, reply, session, { confirmError: CONFIRM_FAILED }, 400)
      await services.sessions.markReauthenticated(session.id)
      return reply.redirect('/account/passkeys?done=confirmed', 303)
    })

    // A fresh check with one of the user's own passkeys.
    app.post('/account/passkeys/confirm-passkey', async (request, reply) => {
      const session = await requireSession(request, formField(request.body, 'csrf_token'))
      try {
        await passkeys.verifyReauthentication(
          session.userId,
          session.id,
          formField(request.body, 'response'),
          request,
        )
      } catch (err) {
        if (!(err instanceof PasskeyRefusal)) throw err
        return showPage(request, reply, session, { confirmError: CONFIRM_FAILED }, 400)
      }
      await services.sessions.markReauthenticated(session.id)
      return reply.redirect('/account/passkeys?done=confirmed', 303)
    })

    app.post('/account/passkeys/:id/rename', async (request, reply) => {
      const session = await requireSession(request, formField(request.body, 'csrf_token'))
      const name = passkeyName(formField(request.body, 'name'))
      if (!name) return showPage(request, reply, session, { error: BAD_NAME }, 400)
      await passkeys.rename(session.userId, passkeyIdParam(request), name, request)
      return reply.redirect('/account/passkeys?done=renamed', 303)
    })

    app.post('/account/passkeys/:id/remove', async (request, reply) => {
      const session = await requireSession(request, formField(request.body, 'csrf_token'))
      try {
        await passkeys.remove(session.userId, passkeyIdParam(request), request)
      } catch (err) {
        if (err instanceof ProblemError && err.status === 409)
          return showPage(request, reply, session, { error: err.message }, 409)
        throw err
      }
      // Nothing to remove (a second click): the list shows it gone either way.
      return reply.redirect('/account/passkeys?done=removed', 303)
    })
  }

  const api = async (app: FastifyInstance) => {
    neverCached(app)

    app.post('/api/account/passkeys/options', async (request) => {
      const session = await requireSession(request, request.headers['x-csrf-token'])
      if (!services.sessions.isFresh(session)) throw new ProblemError(403, NOT_FRESH)
      return passkeys.registrationOptions({ id: session.userId, email: session.email }, session.id)
    })

    app.post('/api/account/passkeys/confirm-options', async (request) => {
      const session = await requireSession(request, request.headers['x-csrf-token'])
      return passkeys.reauthenticationOptions(session.userId, session.id)
    })
  }

  return { pages, api }
}
