import type { FastifyInstance, FastifyRequest } from 'fastify'

/** The scopes each route needs; the linkauthResource plugin checks them before the handler runs. */
export const SYNC = { scopes: ['products:sync'] }
export const ECOMMERCE = { scopes: ['ecommerce:write'] }

/** Whose catalogue, links and conversions: the verified access token's subject. */
export function ownerOf(request: FastifyRequest): string {
  if (!request.auth) throw new Error(`${request.routeOptions.url} has no scopes: it cannot know the user`)
  return request.auth.sub
}

/** Answers about one user's data: never stored by a shared cache. */
export function noStore(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })
}
