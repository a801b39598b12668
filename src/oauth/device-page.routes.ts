import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { uiOf } from '../web/i18n/language.routes.js'
import { signInThenConfirmDevice } from '../accounts/return-path.js'
import { sessionCookies } from '../accounts/session-cookie.js'
import type { SessionService } from '../accounts/session.service.js'
import type { ClientService } from '../clients/client.service.js'
import type { Config } from '../config.js'
import { ProblemError } from '../errors.js'
import { formField } from '../input/form-field.js'
import { constantTimeEqual } from '../lib/secrets.js'
import { clientAddress } from '../rate-limit/client-address.js'
import { csrfToken, isValidCsrfToken, LOGOUT_BINDING } from '../web/csrf.js'
import { deviceConsentPage, deviceDonePage, userCodePage } from '../web/pages/device.page.js'
import type { DeviceAuthorization, DeviceAuthorizationService } from './device-authorization.service.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface DevicePageServices {
  sessions: SessionService
  clients: ClientService
  deviceAuthorizations: DeviceAuthorizationService
}

const GONE = 'This code has expired or was already used. Start again on your device to get a new code.'
const deviceBinding = (id: string) => `device:${id}`

function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body)
}

/**
 * The person's side of the device grant (RFC 8628 §3.3): GET /device (the code form, prefilled by
 * verification_uri_complete's user_code), POST /device (the code checked, throttled), then sign-in on
 * /login (which comes back with next=device-ID) and the device consent (GET/POST /device/confirm),
 * which is never skipped by a remembered consent and needs the "I started this" box for Allow.
 */
export function devicePageRoutes(
  services: DevicePageServices,
  config: Pick<Config, 'issuer' | 'sessionTtl' | 'cookieSecret'>,
) {
  const cookies = sessionCookies(config)

  async function consent(
    http: FastifyRequest,
    reply: FastifyReply,
    request: DeviceAuthorization,
    session: { email: string; csrfSecret: string },
    problem?: string,
  ) {
    const client = await services.clients.findActiveClient(request.clientId)
    if (!client) throw new ProblemError(400, GONE)
    return sendPage(
      reply,
      deviceConsentPage(uiOf(http), {
        app: await services.clients.displayOf(client),
        about: client.metadata,
        scopes: request.scopes,
        email: session.email,
        requestId: request.id,
        csrfToken: csrfToken(session.csrfSecret, deviceBinding(request.id)),
        logoutCsrfToken: csrfToken(session.csrfSecret, LOGOUT_BINDING),
        problem,
      }),
      problem ? 400 : 200,
    )
  }

  return async (app: FastifyInstance) => {
    app.get('/device', async (request, reply) => {
      const userCode = formField(request.query, 'user_code')
      return sendPage(
        reply,
        userCodePage(uiOf(request), {
          csrfToken: cookies.loginCsrfToken(request, reply),
          userCode: userCode?.slice(0, 32),
        }),
      )
    })

    app.post('/device', async (request, reply) => {
      const expected = cookies.expectedLoginCsrf(request)
      const sent = formField(request.body, 'csrf_token')
      if (!expected || !sent || !constantTimeEqual(expected, sent))
        throw new ProblemError(403, 'This form has expired. Reload the page and try again.')
      const typed = formField(request.body, 'user_code')
      const found = await services.deviceAuthorizations.enterUserCode(typed, clientAddress(request))
      if (!found)
        return sendPage(
          reply,
          userCodePage(uiOf(request), {
            csrfToken: expected,
            userCode: typed?.slice(0, 32),
            problem: uiOf(request).t.wrongDeviceCode,
          }),
          400,
        )
      const session = await cookies.currentSession(request, services.sessions)
      if (!session)
        return reply.header('cache-control', 'no-store').redirect(signInThenConfirmDevice(found.id), 303)
      return reply.header('cache-control', 'no-store').redirect(`/device/confirm?request=${found.id}`, 303)
    })

    app.get('/device/confirm', async (request, reply) => {
      const found = await services.deviceAuthorizations.findOpen(formField(request.query, 'request'))
      if (!found) throw new ProblemError(400, GONE)
      const session = await cookies.currentSession(request, services.sessions)
      if (!session)
        return reply.header('cache-control', 'no-store').redirect(signInThenConfirmDevice(found.id), 303)
      return consent(request, reply, found, session)
    })

    app.post('/device/confirm', async (request, reply) => {
      const body = request.body
      const session = await cookies.currentSession(request, services.sessions)
      const requestId = formField(body, 'request') ?? ''
      if (
        !session ||
        !isValidCsrfToken(session.csrfSecret, deviceBinding(requestId), formField(body, 'csrf_token'))
      )
        throw new ProblemError(403, 'This form is not valid for your session. Enter the code again.')
      const decision = formField(body, 'decision')
      if (decision !== 'allow' && decision !== 'deny') throw new ProblemError(400, 'Choose Allow or Deny.')
      const found = await services.deviceAuthorizations.findOpen(requestId)
      if (!found) throw new ProblemError(400, GONE)
      const client = await services.clients.findActiveClient(found.clientId)
      if (!client) throw new ProblemError(400, GONE)
      if (decision === 'deny') {
        if (!(await services.deviceAuthorizations.deny(found, session.userId)))
          throw new ProblemError(400, GONE)
        return sendPage(reply, deviceDonePage(uiOf(request), false, client.name))
      }
      // Device-code phishing: Allow only with the person's word that they started it themselves.
      if (formField(body, 'started_here') !== 'yes')
        return consent(request, reply, found, session, uiOf(request).t.tickTheBox)
      if (!(await services.deviceAuthorizations.approve(found, session.userId, request)))
        throw new ProblemError(400, GONE)
      return sendPage(reply, deviceDonePage(uiOf(request), true, client.name))
    })
  }
}
