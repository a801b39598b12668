import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { ProblemError } from '../errors.js'
import { ACCOUNT_APPS_BINDING, csrfToken, isValidCsrfToken } from '../web/csrf.js'
import { formField } from '../input/form-field.js'
import { activityPage } from '../web/pages/activity.page.js'
import { connectedAppsPage } from '../web/pages/connected-apps.page.js'
import { uiOf } from '../web/i18n/language.routes.js'
import { accountFrame } from './account-frame.js'
import type { ConnectedApp, ConnectedAppsService } from './connected-apps.service.js'
import { signInThenReturnTo } from './return-path.js'
import { sessionCookies } from './session-cookie.js'
import type { SignInSession, SessionService } from './session.service.js'
import type { PasskeyService } from './passkey.service.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface AccountServices {
  sessions: SessionService
  connectedApps: ConnectedAppsService
  passkeys: Pick<PasskeyService, 'enabled'>
}

/** The JSON shape of GET /api/account/apps entries (DESIGN §3). */
function appJson(app: ConnectedApp) {
  return {
    client_id: app.clientId,
    name: app.name,
    scopes: app.scopes,
    resources: app.resources,
    description: app.about.description,
    homepage_url: app.about.homepageUrl,
    privacy_policy_url: app.about.privacyPolicyUrl,
    terms_url: app.about.termsUrl,
    authorized_at: app.authorizedAt.toISOString(),
    last_used_at: app.lastUsedAt?.toISOString() ?? null,
    standing: app.display.standing,
    standing_label: app.display.label,
    host: app.display.host,
    connected: app.connected,
    state: app.connected ? 'connected' : 'signed_out',
    on_another_device: app.onAnotherDevice,
  }
}

const clientIdParam = (request: FastifyRequest) => (request.params as { client_id: string }).client_id

/**
 * The user's connected applications: the pages (GET /account/apps, POST …/:client_id/revoke) and the
 * same as JSON for the main site's front end (GET/DELETE /api/account/apps…), two plugins because
 * they answer errors differently (a page, problem details). Both authenticate by the sign-in
 * session cookie; every change needs the session's CSRF token (form field csrf_token, or the
 * X-CSRF-Token header on the API; GET /api/account/apps hands it out as csrf_token).
 */
export function connectedAppsRoutes(
  services: AccountServices,
  config: Pick<Config, 'issuer' | 'sessionTtl'>,
) {
  const cookies = sessionCookies(config)
  const apps = services.connectedApps

  async function requireSession(request: FastifyRequest): Promise<SignInSession> {
    const session = await cookies.currentSession(request, services.sessions)
    if (!session) throw new ProblemError(401, 'Sign in first.')
    return session
  }

  function requireCsrf(session: SignInSession, token: unknown, detail: string): void {
    if (!isValidCsrfToken(session.csrfSecret, ACCOUNT_APPS_BINDING, token))
      throw new ProblemError(403, detail)
  }

  const sendPage = (reply: FastifyReply, body: string) => reply.type('text/html; charset=utf-8').send(body)

  // Personal data and CSRF tokens: never cached, errors included.
  const neverCached = (app: FastifyInstance) =>
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store')
    })

  const pages = async (app: FastifyInstance) => {
    neverCached(app)

    app.get('/account/apps', async (request, reply) => {
      const session = await cookies.currentSession(request, services.sessions)
      if (!session) return reply.redirect(signInThenReturnTo('account-apps'), 303)
      const revoked = formField(request.query, 'revoked')
      const [list, revokedName] = await Promise.all([
        apps.list(session.userId),
        revoked === undefined ? undefined : apps.revokedAppName(session.userId, revoked),
      ])
      const token = csrfToken(session.csrfSecret, ACCOUNT_APPS_BINDING)
      const frame = accountFrame(session, 'apps', services.passkeys.enabled, uiOf(request))
      return sendPage(reply, connectedAppsPage({ frame, apps: list, csrfToken: token, revokedName }))
    })

    app.get('/account/activity', async (request, reply) => {
      const session = await cookies.currentSession(request, services.sessions)
      if (!session) return reply.redirect(signInThenReturnTo('account-activity'), 303)
      const history = await apps.history(session.userId)
      return sendPage(
        reply,
        activityPage(accountFrame(session, 'activity', services.passkeys.enabled, uiOf(request)), history),
      )
    })

    app.post('/account/apps/:client_id/revoke', async (request, reply) => {
      const session = await cookies.currentSession(request, services.sessions)
      if (!session) throw new ProblemError(403, 'Your session has ended. Sign in and try again.')
      requireCsrf(
        session,
        formField(request.body, 'csrf_token'),
        'This form has expired. Reload the page and try again.',
      )
      const clientId = clientIdParam(request)
      const revoked = await apps.revoke(session.userId, clientId, request)
      // Nothing live to revoke (e.g. a second click): the list shows it gone either way.
      return reply.redirect(
        revoked ? `/account/apps?revoked=${encodeURIComponent(clientId)}` : '/account/apps',
        303,
      )
    })
  }

  const api = async (app: FastifyInstance) => {
    neverCached(app)

    app.get('/api/account/apps', async (request) => {
      const session = await requireSession(request)
      const list = await apps.list(session.userId)
      return { apps: list.map(appJson), csrf_token: csrfToken(session.csrfSecret, ACCOUNT_APPS_BINDING) }
    })

    app.delete('/api/account/apps/:client_id', async (request, reply) => {
      const session = await requireSession(request)
      requireCsrf(session, request.headers['x-csrf-token'], 'Missing or invalid X-CSRF-Token header.')
      if (!(await apps.revoke(session.userId, clientIdParam(request), request)))
        throw new ProblemError(404, 'No connected application with this client_id.')
      return reply.code(204).send()
    })
  }

  return { pages, api }
}
