/**
 * A resource API protecting its routes with @linkauth/resource: access tokens verified locally,
 * revocations pushed by the authorization server's event feed, RFC 6750 answers.
 */
import Fastify from 'fastify'
import { createResourceVerifier, linkauthResource } from '@linkauth/resource'

export interface ApiConfig {
  issuer: string // e.g. https://auth.example.com
  audience: string // the `aud` of the service's access tokens: {issuer}/api unless the operator set another
  resourceServerId: string // resource-server credentials, from the operator
  resourceServerSecret: string
}

export async function buildApi(config: ApiConfig) {
  const app = Fastify({ logger: { level: 'warn' } })
  const verifier = await createResourceVerifier({
    issuer: config.issuer,
    audience: config.audience,
    credentials: { id: config.resourceServerId, secret: config.resourceServerSecret },
    logger: app.log, // mode switches (feed stale → introspection, and back) are logged here
  })
  app.addHook('onClose', () => verifier.close())
  await app.register(linkauthResource, { verifier, realm: 'links' })

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
