import type { FastifyInstance, FastifyRequest } from 'fastify'
import { OAuthError } from '../errors.js'
import { clientAddress } from '../rate-limit/client-address.js'
import { registrationJson, type DynamicRegistrationService } from './dynamic-registration.service.js'

/** The token of `Authorization: Bearer <token>`, or undefined. */
function bearer(request: FastifyRequest): string | undefined {
  const match = /^Bearer ([\x21-\x7e]{1,512})$/.exec(request.headers.authorization ?? '')
  return match?.[1]
}

const notYours = () =>
  new OAuthError('invalid_token', 'No registration has this client_id and registration access token.', 401)

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface RegistrationServices {
  registrations: DynamicRegistrationService
}

/**
 * RFC 7591 registration (POST /api/oauth/register) and RFC 7592 read and delete
 * (GET/DELETE /api/oauth/register/:client_id with the registration access token as Bearer).
 * Absent when DYNAMIC_REGISTRATION=off.
 */
export function registrationRoutes(services: RegistrationServices, issuer: string) {
  return async (app: FastifyInstance) => {
    if (!services.registrations.enabled) return
    app.post('/api/oauth/register', async (request, reply) => {
      const { client, registrationToken } = await services.registrations.register(
        request.body,
        bearer(request),
        clientAddress(request),
        request,
      )
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(registrationJson(client, issuer, registrationToken))
    })
    app.get('/api/oauth/register/:client_id', async (request, reply) => {
      const { client_id } = request.params as { client_id: string }
      const client = await services.registrations.read(client_id, bearer(request))
      if (!client) throw notYours()
      return reply.header('cache-control', 'no-store').send(registrationJson(client, issuer))
    })
    app.delete('/api/oauth/register/:client_id', async (request, reply) => {
      const { client_id } = request.params as { client_id: string }
      if (!(await services.registrations.remove(client_id, bearer(request), request))) throw notYours()
      return reply.code(204).send()
    })
  }
}
