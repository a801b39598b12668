import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { parseOrProblem } from '../input/parse-or-problem.js'
import {
  type Client,
  type ClientNarrowing,
  clientUpdateSchema,
  defaultScopesOf,
  newClientSchema,
  type ClientService,
} from './client.service.js'
import { appDisplay } from './standing.js'

export function clientJson(client: Client) {
  return {
    client_id: client.id,
    name: client.name,
    redirect_uris: client.redirectUris,
    scopes: client.scopes,
    default_scopes: defaultScopesOf(client),
    homepage_url: client.metadata.homepageUrl,
    privacy_policy_url: client.metadata.privacyPolicyUrl,
    terms_url: client.metadata.termsUrl,
    description: client.metadata.description,
    created_at: client.createdAt.toISOString(),
    disabled_at: client.disabledAt?.toISOString() ?? null,
    require_dpop: client.requireDpop,
    require_pushed_authorization_requests: client.requirePar,
    grant_types: client.grantTypes,
    kind: client.kind,
    standing: client.standing,
    standing_override: client.standingOverride,
    host: appDisplay(client).host,
  }
}

function narrowingJson(narrowing: ClientNarrowing | undefined) {
  return narrowing
    ? {
        grants_revoked: narrowing.grantsRevoked.length,
        grants_narrowed: narrowing.grantsNarrowed,
        refresh_families_revoked: narrowing.familiesRevoked,
        refresh_families_continued: narrowing.familiesContinued,
        codes_expired: narrowing.codesExpired,
      }
    : null
}

const idParams = z.object({ id: z.string().max(128) })

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface ClientAdminServices {
  clients: ClientService
}

/** Admin API: register, list, show, update, disable and enable client applications; verify or unverify them. */
export function clientAdminRoutes(services: ClientAdminServices) {
  return async (app: FastifyInstance) => {
    app.post('/admin/clients', async (request, reply) => {
      const input = parseOrProblem(newClientSchema, request.body)
      const client = await services.clients.createClient(input, request)
      return reply.code(201).send(clientJson(client))
    })
    app.get('/admin/clients', async () => ({
      clients: (await services.clients.listClients()).map(clientJson),
    }))
    app.get('/admin/clients/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.getClient(id))
    })
    app.patch('/admin/clients/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      const patch = parseOrProblem(clientUpdateSchema, request.body)
      const { client, narrowing } = await services.clients.updateClient(id, patch, request)
      return { ...clientJson(client), narrowed: narrowingJson(narrowing) }
    })
    app.delete('/admin/clients/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.disableClient(id, request))
    })
    app.post('/admin/clients/:id/enable', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.enableClient(id, request))
    })
    app.post('/admin/clients/:id/verify', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.setStanding(id, 'verified', request))
    })
    app.post('/admin/clients/:id/unverify', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.setStanding(id, 'unverified', request))
    })
    app.delete('/admin/clients/:id/standing', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.setStanding(id, null, request))
    })
  }
}
