import type { FastifyInstance } from 'fastify'
import { notFoundPage } from '../web/pages.js'
import type { LinkService } from './link.service.js'

/**
 * `GET /:slug`: the short URL itself, public. 302 to the target, counting the click; HEAD (link
 * previews, monitors) answers the same without counting. `no-store`, so that every visit reaches
 * us and is counted rather than replayed from a browser cache.
 */
export function redirectRoutes(links: LinkService) {
  return async (app: FastifyInstance) => {
    app.get('/:slug', async (request, reply) => {
      const { slug } = request.params as { slug: string }
      const target = await links.resolveSlug(slug, { count: request.method === 'GET' })
      if (target === undefined) return notFoundPage(reply)
      return reply.header('cache-control', 'no-store').redirect(target, 302)
    })
  }
}
