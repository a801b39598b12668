import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { uiOf } from '../web/i18n/language.routes.js'
import { sessionCookies } from '../accounts/session-cookie.js'
import type { SignInSession, SessionService } from '../accounts/session.service.js'
import type { Config } from '../config.js'
import { OAuthError, type OAuthErrorCode, ProblemError } from '../errors.js'
import { ALL_SCOPES, commonScopes, isSubset } from '../lib/scopes.js'
import { authorizeBinding, csrfToken, isValidCsrfToken, LOGOUT_BINDING } from '../web/csrf.js'
import { formField } from '../input/form-field.js'
import { consentPage } from '../web/pages/consent.page.js'
import { allowFormRedirectTo } from '../web/security-headers.js'
import {
  type AuthorizationRequest,
  type RawQuery,
  readClientTarget,
  validateAuthorizationParameters,
} from './authorize-request.js'
import type { PendingAuthorization, AuthorizeService } from './authorize.service.js'
import { type Client, type ClientService, requestableScopes } from '../clients/client.service.js'
import { isLoopbackRedirectUri, isNativeRedirectUri } from '../clients/redirect-uri.js'
import { authorizationClient } from './authorization-client.js'
import type { ParService } from './par.service.js'
import { requestOf } from './authorize.service.js'
import { type ClientTarget, redirectToClient } from './client-redirect.js'
import { authorizationTargets } from './resource-targets.js'
import type { ResourceServerService } from '../resource-servers/resource-server.service.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface AuthorizeServices {
  clients: ClientService
  sessions: SessionService
  authorize: AuthorizeService
  resourceServers: ResourceServerService
  par: ParService
}

const GONE =
  'This authorization request has expired or was already answered. Go back to the application and start again.'
const PUSHED_GONE =
  'This authorization request has expired, was already used, or is not this application’s. Go back to the application and start again.'
const MUST_PUSH =
  'This application must push its authorization requests (RFC 9126): send them to the pushed_authorization_request_endpoint, then here with client_id and request_uri.'

/**
 * GET /oauth/authorize (RFC 6749 §4.1.1, RFC 7636, RFC 9207), its continuation after sign-in, and
 * POST /oauth/authorize (the consent form). Errors about the client or redirect_uri are pages and
 * never redirect; every later error goes back to the exactly-registered redirect_uri.
 */
export function authorizeRoutes(
  services: AuthorizeServices,
  config: Pick<
    Config,
    | 'issuer'
    | 'sessionTtl'
    | 'requireResource'
    | 'clientMetadataScopes'
    | 'dynamicRegistrationScopes'
    | 'clientMetadataDefaultScopes'
    | 'dynamicRegistrationDefaultScopes'
    | 'requirePar'
  >,
) {
  const cookies = sessionCookies(config)

  const toClient = (
    reply: FastifyReply,
    target: ClientTarget,
    params: Record<string, string>,
    status: 302 | 303 = 302,
  ) => redirectToClient(reply, config.issuer, target, params, status)
  const redirectError = (
    reply: FastifyReply,
    target: ClientTarget,
    error: OAuthErrorCode,
    description: string,
    status: 302 | 303 = 302,
  ) => toClient(reply, target, { error, error_description: description }, status)

  /** The registered, enabled client, when the redirect_uri is one of its own (exact string match). */
  const trustedClient = (clientId: string, redirectUri: string, from?: FastifyRequest) =>
    authorizationClient(services.clients, { clientId, redirectUri }, { from, refusedStatus: 400 })

  /**
   * A signed-in user's repeat authorization in one statement (AuthorizeService.issueForSession): only
   * for a request valid whatever the client's scopes (the statement checks those, the client and the
   * redirect_uri) that asks for neither a fresh sign-in nor the consent page. Undefined sends the
   * request the long way, which tells every other case apart and answers it.
   */
  async function issueAtOnce(
    request: FastifyRequest,
    query: RawQuery,
    target: { clientId: string; redirectUri: string },
  ) {
    const sessionToken = request.cookies[cookies.sessionCookieName]
    // A native app's redirect URI is never answered without the user (RFC 8252 §8.6). A client_id
    // URL the trust policy no longer accepts goes the long way too, which refuses it (no query here).
    if (
      !sessionToken ||
      isNativeRedirectUri(target.redirectUri) ||
      !services.clients.isAcceptedClientId(target.clientId)
    )
      return undefined
    // Without defaultScopes, a request without scope fails here: its client's defaults are read the long way.
    const result = validateAuthorizationParameters(query, { ...target, allowedScopes: ALL_SCOPES })
    // Resource indicators need their registry looked up, and a required one its refusal: the long way.
    if (
      !result.ok ||
      result.request.prompt.some((p) => p !== 'none') ||
      result.request.resources.length > 0 ||
      config.requireResource ||
      config.requirePar
    )
      return undefined
    const issued = await services.authorize.issueForSession(result.request, sessionToken)
    return issued && { auth: result.request, code: issued.code }
  }

  type ConsentClient = Pick<Client, 'id' | 'name' | 'metadata' | 'kind' | 'redirectUris' | 'standingOverride'>

  /** Sign-in, remembered consent, or the consent page: shared by the first GET and the continuation. */
  async function proceed(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: AuthorizationRequest,
    client: ConsentClient,
    pending?: PendingAuthorization,
  ): Promise<FastifyReply> {
    const session = await cookies.currentSession(request, services.sessions)
    const wantsNone = auth.prompt.includes('none')
    const needsFreshLogin = auth.prompt.includes('login') && (!session || pending?.sessionId !== session.id)
    if (!session || needsFreshLogin) {
      if (wantsNone) return redirectError(reply, auth, 'login_required', 'The user is not signed in.')
      const target = pending ?? (await services.authorize.createPending(auth))
      return reply.header('cache-control', 'no-store').redirect(`/login?request=${target.id}`, 303)
    }
    // RFC 8252 §8.6: anyone can claim a native app's client_id and listen at its redirect URI, so
    // a remembered consent becomes a one-click confirmation there, never a silent code.
    const native = isNativeRedirectUri(auth.redirectUri)
    if (!auth.prompt.includes('consent') && !native) {
      const result = await services.authorize.issueWithRememberedConsent(auth, session.userId, pending?.id)
      if (result === 'gone') throw new ProblemError(400, GONE)
      if (result !== 'ask') return toClient(reply, auth, { code: result.code })
    }
    if (wantsNone)
      return redirectError(
        reply,
        auth,
        'consent_required',
        native
          ? 'The user confirms every authorization of an application on their device.'
          : 'The user has not approved this access.',
      )
    const confirmOnly =
      native &&
      !auth.prompt.includes('consent') &&
      (await services.authorize.isCoveredByLiveGrant(auth, session.userId))
    const target = pending ?? (await services.authorize.createPending(auth))
    return showConsent(request, reply, target, client, session, confirmOnly)
  }

  async function showConsent(
    request: FastifyRequest,
    reply: FastifyReply,
    pending: PendingAuthorization,
    client: ConsentClient,
    session: SignInSession,
    confirmOnly = false,
  ) {
    allowFormRedirectTo(reply, pending.redirectUri)
    const targets =
      pending.resources.length > 0 ? await services.resourceServers.findTargets(pending.resources) : undefined
    const body = consentPage(uiOf(request, pending.uiLocale), {
      app: await services.clients.displayOf(client),
      onDevice: client.redirectUris.every(isLoopbackRedirectUri),
      about: client.metadata,
      scopes: pending.scopes,
      apis: pending.resources.map((resource) => ({
        resource,
        name: targets?.get(resource)?.name ?? resource,
        scopes: commonScopes(pending.scopes, targets?.get(resource)?.scopes ?? []),
      })),
      redirectUri: pending.redirectUri,
      email: session.email,
      requestId: pending.id,
      csrfToken: csrfToken(session.csrfSecret, authorizeBinding(pending.id)),
      logoutCsrfToken: csrfToken(session.csrfSecret, LOGOUT_BINDING),
      confirmOnly,
    })
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body)
  }

  /** A pending request whose client is still enabled and still has this redirect_uri and these scopes. */
  async function openPending(id: unknown) {
    const pending = await services.authorize.findOpenPending(id)
    if (!pending) throw new ProblemError(400, GONE)
    const client = await trustedClient(pending.clientId, pending.redirectUri)
    // The operator may have removed a scope since the request was checked (PATCH /admin/clients).
    if (!isSubset(pending.scopes, client.scopes))
      throw new OAuthError(
        'invalid_scope',
        'This application may no longer ask for some of these scopes.',
        400,
      )
    return { pending, client }
  }

  return async (app: FastifyInstance) => {
    /**
     * The long way of GET /oauth/authorize, for a plain request (`pushed` false) and for the
     * parameters of a pushed one (RFC 9126 §4), which were checked when pushed and are checked again
     * against the client and the registry as they are now.
     */
    async function authorizeWith(
      request: FastifyRequest,
      reply: FastifyReply,
      query: RawQuery,
      pushed: boolean,
    ): Promise<FastifyReply> {
      const target = readClientTarget(query)
      if (!target.ok) throw new OAuthError('invalid_request', target.description)
      const client = await trustedClient(target.clientId, target.redirectUri, request)
      const scopes = requestableScopes(config, client)
      const result = validateAuthorizationParameters(query, {
        ...target,
        allowedScopes: scopes.allowed,
        defaultScopes: scopes.defaults,
      })
      if (!result.ok) {
        return redirectError(
          reply,
          { redirectUri: target.redirectUri, state: result.state },
          result.error,
          result.description,
        )
      }
      if (!pushed && (config.requirePar || client.requirePar))
        return redirectError(reply, result.request, 'invalid_request', MUST_PUSH)
      const targets = await authorizationTargets(
        services.resourceServers,
        result.request.resources,
        result.request.scopes,
        { required: config.requireResource, scopesDefaulted: result.scopesDefaulted },
      )
      if (!targets.ok) return redirectError(reply, result.request, targets.error, targets.description)
      return proceed(request, reply, { ...result.request, scopes: targets.scopes }, client)
    }

    /**
     * RFC 9126 §4: client_id and request_uri; every other parameter is ignored. A request_uri that is
     * unknown, spent, expired or another client's is a page, never a redirect (nothing was checked).
     */
    async function authorizePushed(request: FastifyRequest, reply: FastifyReply, query: RawQuery) {
      const { client_id: clientId, request_uri: requestUri } = query
      if (typeof clientId !== 'string' || clientId === '')
        throw new OAuthError('invalid_request', 'The request has no client_id, or more than one.')
      if (typeof requestUri !== 'string') throw new OAuthError('invalid_request', 'request_uri is repeated.')
      const pushed = await services.par.take(requestUri, clientId)
      if (!pushed) throw new ProblemError(400, PUSHED_GONE)
      return authorizeWith(request, reply, pushed, true)
    }

    app.get('/oauth/authorize', async (request, reply) => {
      const query = request.query as RawQuery
      if (query.request_uri !== undefined) return authorizePushed(request, reply, query)
      const target = readClientTarget(query)
      if (!target.ok) throw new OAuthError('invalid_request', target.description)
      const atOnce = await issueAtOnce(request, query, target)
      if (atOnce) return toClient(reply, atOnce.auth, { code: atOnce.code })
      return authorizeWith(request, reply, query, false)
    })

    app.get('/oauth/authorize/continue', async (request, reply) => {
      const { pending, client } = await openPending(formField(request.query, 'request'))
      return proceed(request, reply, requestOf(pending), client, pending)
    })

    app.post('/oauth/authorize', async (request, reply) => {
      const body = request.body
      const session = await cookies.currentSession(request, services.sessions)
      const requestId = formField(body, 'request') ?? ''
      // Bound to this session and this pending request; a replay fails below (the request is answered).
      if (
        !session ||
        !isValidCsrfToken(session.csrfSecret, authorizeBinding(requestId), formField(body, 'csrf_token'))
      ) {
        throw new ProblemError(
          403,
          'This form is not valid for your session. Go back to the application and start again.',
        )
      }
      const decision = formField(body, 'decision')
      if (decision !== 'allow' && decision !== 'deny') throw new ProblemError(400, 'Choose Allow or Deny.')
      const pending = await services.authorize.findOpenPending(requestId)
      if (!pending) throw new ProblemError(403, GONE)
      await trustedClient(pending.clientId, pending.redirectUri)
      const answered = await services.authorize.answer(
        pending.id,
        session.userId,
        decision === 'allow',
        request,
      )
      if (!answered) throw new ProblemError(403, GONE)
      const auth = requestOf(answered.pending)
      if (!answered.issued) {
        return redirectError(reply, auth, 'access_denied', 'The user denied the request.', 303)
      }
      return toClient(reply, auth, { code: answered.issued.code }, 303)
    })
  }
}
