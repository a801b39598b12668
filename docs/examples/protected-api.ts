/**
 * A resource API protecting its routes with @linkauth/resource: access tokens for this API (their
 * aud is or lists its identifier) verified locally, revocations pushed by the authorization
 * server's event feed, RFC 6750 answers, and its RFC 9728 metadata, so clients find the
 * authorization server from the API.
 */
import Fastify from 'fastify'
import { createResourceVerifier, linkauthResource } from '@linkauth/resource'

export interface ApiConfig {
  issuer: string // e.g. https://auth.example.com
  resource: string // this API's resource identifier, as registered with linkauth, e.g. https://api.example.com/links
  resourceServerId: string // resource-server credentials, from the operator
  resourceServerSecret: string
}

export async function buildApi(config: ApiConfig) {
  const app = Fastify({ logger: { level: 'warn' } })
  const verifier = await createResourceVerifier({
    issuer: config.issuer,
    resource: config.resource, // a token whose aud neither is nor lists it is refused (invalid_token)
    credentials: { id: config.resourceServerId, secret: config.resourceServerSecret },
    logger: app.log, // mode switches (feed stale → introspection, and back) are logged here
  })
  app.addHook('onClose', () => verifier.close())
  // Also serves its RFC 9728 document at the URL derived from `resource` (§3.1), and only there.
  await app.register(linkauthResource, { verifier, realm: 'links', resourceName: 'Links API' })

  // A route names the scopes it needs; the plugin answers 401/403 before the handler runs.
  app.get('/links', { config: { scopes: ['links:read'] } }, async (request) => {
    return { owner: request.auth!.sub, links: [] }
  })
  app.post('/links', { config: { scopes: ['links:write'] } }, async (request, reply) => {
    return reply.code(201).send({ owner: request.auth!.sub, created: request.body })
  })
  // No config.scopes: public.
  app.get('/healthz', async () => ({ status: 'ok', verifier: verifier.status().mode }))
  return app
}
