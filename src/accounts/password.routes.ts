import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { ProblemError } from '../errors.js'
import { answerHeldBack } from './held-back.js'
import { formField } from '../input/form-field.js'
import { constantTimeEqual } from '../lib/secrets.js'
import { clientAddress } from '../rate-limit/client-address.js'
import { ACCOUNT_PASSWORD_BINDING, csrfToken, isValidCsrfToken } from '../web/csrf.js'
import { html } from '../web/html.js'
import {
  changePasswordPage,
  passwordSetPage,
  resetLinkInvalidPage,
  resetPasskeyPage,
  resetPasswordPage,
} from '../web/pages/password.page.js'
import { allowOwnScript } from '../web/security-headers.js'
import type { Ui } from '../web/i18n/catalogue.js'
import { uiOf } from '../web/i18n/language.routes.js'
import { PasskeyRefusal, passkeyName, type PasskeyService } from './passkey.service.js'
import { accountFrame } from './account-frame.js'
import { signInThenReturnTo } from './return-path.js'
import type { SignInSession, SessionService } from './session.service.js'
import { knownDeviceCookie, sessionCookies } from './session-cookie.js'
import type { SignInClient, SignInThrottle } from './sign-in-throttle.service.js'
import { passwordSchema, RESET_PASSWORD_PATH, type UserService } from './user.service.js'
import type { Metrics } from '../metrics/metrics.js'
import type { PasskeyResetService } from './passkey-reset.service.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface PasswordServices {
  sessions: SessionService
  users: UserService
  signInThrottle: SignInThrottle
  metrics: Metrics
  passkeys: PasskeyService
  passkeyResets: PasskeyResetService
}

/** The new password's problem in words, or undefined when it will do (the rule of user creation). */
function newPasswordProblem(ui: Ui, password: string, confirmation: string | undefined): string | undefined {
  const parsed = passwordSchema.safeParse(password)
  if (!parsed.success) return password.length < 8 ? ui.t.passwordTooShort : ui.t.passwordTooLong
  if (confirmation !== password) return ui.t.passwordsDiffer
  return undefined
}

function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  // CSRF tokens, and on the reset page a one-time token: never cached.
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body)
}

/**
 * GET/POST /account/password (a signed-in user changes their password) and GET/POST
 * /account/reset-password (the page of a one-time link the operator issued).
 *
 * A change asks for the current password, held back like sign-in (the same throttle, counted against
 * the same account), so a borrowed session cannot guess it faster than the sign-in form could; it
 * ends every other session of the user. The reset link's token arrives in the query (the logs redact
 * `token=`; Referrer-Policy is no-referrer) and goes back in the form's body; the form also carries
 * the sign-in CSRF cookie's value. A passwordless account's link offers a new passkey instead of a
 * password (passkey-reset.service.ts), and its form takes no password.
 */
export function passwordRoutes(
  services: PasswordServices,
  config: Pick<Config, 'issuer' | 'sessionTtl' | 'cookieSecret' | 'knownDeviceTtl'>,
) {
  const cookies = sessionCookies(config)
  const devices = knownDeviceCookie(config)

  /** The password page's parts for this session: frame, form token, and password sign-in's state. */
  async function pageParts(request: FastifyRequest, session: SignInSession, notice?: string) {
    const passkeys = services.passkeys
    const passwordSignIn = passkeys.enabled
      ? {
          on: (await passkeys.passwordSignIn(session.userId)) !== false,
          hasPasskeys: (await passkeys.list(session.userId)).length > 0,
          notice,
        }
      : undefined
    return {
      frame: accountFrame(session, 'password', passkeys.enabled, uiOf(request)),
      csrfToken: csrfToken(session.csrfSecret, ACCOUNT_PASSWORD_BINDING),
      passwordSignIn,
    }
  }

  return async (app: FastifyInstance) => {
    app.get('/account/password', async (request, reply) => {
      const session = await cookies.currentSession(request, services.sessions)
      if (!session)
        return reply.header('cache-control', 'no-store').redirect(signInThenReturnTo('account-password'), 303)
      return sendPage(reply, changePasswordPage(await pageParts(request, session)))
    })

    // Password sign-in off (a passwordless account: only passkeys sign in) or on again.
    app.post('/account/password/sign-in', async (request, reply) => {
      const session = await cookies.currentSession(request, services.sessions)
      if (!session) throw new ProblemError(403, 'Your session has ended. Sign in and try again.')
      if (
        !isValidCsrfToken(session.csrfSecret, ACCOUNT_PASSWORD_BINDING, formField(request.body, 'csrf_token'))
      )
        throw new ProblemError(403, 'This form has expired. Reload the page and try again.')
      const on = formField(request.body, 'enabled') === 'true'
      await services.passkeys.setPasswordSignIn(session.userId, on, request)
      const t = uiOf(request).t
      const notice = on ? t.passwordSignInOnAgain : t.passwordSignInOffNow
      return sendPage(reply, changePasswordPage(await pageParts(request, session, notice)))
    })

    app.post('/account/password', async (request, reply) => {
      const session = await cookies.currentSession(request, services.sessions)
      if (!session) throw new ProblemError(403, 'Your session has ended. Sign in and try again.')
      const body = request.body
      if (!isValidCsrfToken(session.csrfSecret, ACCOUNT_PASSWORD_BINDING, formField(body, 'csrf_token')))
        throw new ProblemError(403, 'This form has expired. Reload the page and try again.')
      const parts = await pageParts(request, session)
      const ui = parts.frame.ui
      const form = (status: number, alert: { error: string } | { retryAfterSeconds: number }) =>
        sendPage(reply, changePasswordPage({ ...parts, ...alert }), status)

      const account = services.signInThrottle.accountOf(session.email)
      const deviceId = devices.deviceFor(request, account)
      const client: SignInClient = deviceId ? { device: deviceId } : { address: clientAddress(request) }
      const current = formField(body, 'current_password') ?? ''
      const checked = await services.sessions.verifyPasswordOf(session, current, client, request)
      if ('held' in checked) {
        const wait = answerHeldBack(reply, services.metrics.rateLimited, checked.held)
        return form(429, { retryAfterSeconds: wait })
      }
      if (!checked.ok) return form(400, { error: ui.t.currentPasswordWrong })
      const next = formField(body, 'new_password') ?? ''
      const problem = newPasswordProblem(ui, next, formField(body, 'confirm_password'))
      if (problem) return form(400, { error: problem })
      const disconnectApps = formField(body, 'disconnect_apps') === 'yes'
      const { appsDisconnected } = await services.users.changePassword(
        session.userId,
        session.id,
        next,
        request,
        { disconnectApps },
      )
      const apps = disconnectApps ? ` ${ui.t.appsDisconnected(appsDisconnected)}` : ''
      return sendPage(
        reply,
        passwordSetPage(ui, {
          heading: ui.t.passwordChanged,
          message: `${ui.t.passwordChangedMessage}${apps}`,
          link: html`<a href="/account/apps">${ui.t.backToConnectedApps}</a>`,
        }),
      )
    })

    app.get(RESET_PASSWORD_PATH, async (request, reply) => {
      const ui = uiOf(request)
      const token = formField(request.query, 'token')
      const link = await services.users.resetLinkFor(token)
      if (!link) return sendPage(reply, resetLinkInvalidPage(ui), 400)
      const csrf = cookies.loginCsrfToken(request, reply)
      if (link.restores === 'passkey') {
        allowOwnScript(reply)
        return sendPage(reply, resetPasskeyPage(ui, { token: token!, csrfToken: csrf }))
      }
      return sendPage(reply, resetPasswordPage(ui, { token: token!, csrfToken: csrf }))
    })

    app.post(RESET_PASSWORD_PATH, async (request, reply) => {
      const ui = uiOf(request)
      const body = request.body
      const expected = cookies.expectedLoginCsrf(request)
      const sent = formField(body, 'csrf_token')
      if (!expected || !sent || !constantTimeEqual(expected, sent))
        throw new ProblemError(403, 'This form has expired. Open the link again.')
      const token = formField(body, 'token')
      const link = await services.users.resetLinkFor(token)
      if (!link) return sendPage(reply, resetLinkInvalidPage(ui), 400)
      if (link.restores === 'passkey') return resetWithPasskey(request, reply, token!, expected)
      const next = formField(body, 'new_password') ?? ''
      const problem = newPasswordProblem(ui, next, formField(body, 'confirm_password'))
      if (problem)
        return sendPage(
          reply,
          resetPasswordPage(ui, { token: token!, csrfToken: expected, error: problem }),
          400,
        )
      if (!(await services.users.resetPassword(token, next, request)))
        return sendPage(reply, resetLinkInvalidPage(ui), 400)
      // Every session of the user ended, this browser's too if it had one.
      cookies.clearSession(reply)
      return sendPage(
        reply,
        passwordSetPage(ui, {
          heading: ui.t.passwordSet,
          message: ui.t.passwordSetMessage,
          link: html`<a href="/login">${ui.t.signInWithNewPassword}</a>`,
        }),
      )
    })
  }

  /** A passwordless account's reset: the new passkey in `response`, never a password. */
  async function resetWithPasskey(
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    preSession: string,
  ): Promise<FastifyReply> {
    const body = request.body
    const ui = uiOf(request)
    const again = (error: string) => {
      allowOwnScript(reply)
      const name = formField(body, 'name')
      return sendPage(reply, resetPasskeyPage(ui, { token, csrfToken: preSession, name, error }), 400)
    }
    const name = passkeyName(formField(body, 'name'))
    if (!name) return again(ui.t.passkeyNameRule)
    let done: boolean
    try {
      done = await services.passkeyResets.reset(
        { token, preSession, responseText: formField(body, 'response'), name },
        request,
      )
    } catch (err) {
      if (!(err instanceof PasskeyRefusal)) throw err
      return again(
        err.reason === 'already_registered'
          ? ui.t.passkeyAlreadyRegisteredElsewhere
          : ui.t.passkeyRegisterFailed,
      )
    }
    if (!done) return sendPage(reply, resetLinkInvalidPage(ui), 400)
    cookies.clearSession(reply)
    return sendPage(
      reply,
      passwordSetPage(ui, {
        heading: ui.t.passkeyAddedTitle,
        message: ui.t.passkeyAddedMessage(name),
        link: html`<a href="/login">${ui.t.signInWithPasskey}</a>`,
      }),
    )
  }
}
