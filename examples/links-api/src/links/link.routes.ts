import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parseInput } from '../web/parse.js'
import { writingAppOf } from '../../../shared/app-leash.js'
import type { LinkInputSchemas } from './link-input.js'
import type { Link, LinkService, LinkStats } from './link.service.js'

/** The scopes each route needs; the linkauthResource plugin checks them before the handler runs. */
export const READ = { scopes: ['links:read'] }
export const WRITE = { scopes: ['links:write'] }

/** Whose links: the verified access token's subject (every scoped route has one). */
export function ownerOf(request: FastifyRequest): string {
  if (!request.auth) throw new Error(`${request.routeOptions.url} has no scopes: it cannot know the user`)
  return request.auth.sub
}

export function linkJson(link: Link, publicUrl: string) {
  return {
    id: link.id,
    slug: link.slug,
    short_url: `${publicUrl}/${link.slug}`,
    target_url: link.targetUrl,
    tags: link.tags,
    clicks: link.clicks,
    title: link.title,
    imported_clicks: link.importedClicks,
    created_at: link.createdAt.toISOString(),
    updated_at: link.updatedAt.toISOString(),
  }
}

export function statsJson(stats: LinkStats) {
  return {
    link_id: stats.linkId,
    from: stats.from,
    to: stats.to,
    total_clicks: stats.totalClicks,
    clicks_in_range: stats.clicksInRange,
    days: stats.days,
  }
}

/** The owner's short links: create, list (by tag or text, paged), read, change, delete, and their statistics. */
export function linkRoutes(links: LinkService, schemas: LinkInputSchemas, publicUrl: string) {
  const json = (link: Link) => linkJson(link, publicUrl)
  const linkId = (request: FastifyRequest) => (request.params as { id: string }).id
  return async (app: FastifyInstance) => {
    // Answers about one user's links: never stored by a shared cache.
    app.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store')
    })

    app.post('/api/links', { config: WRITE }, async (request, reply) => {
      const owner = ownerOf(request)
      const input = parseInput(schemas.newLink, request.body)
      // The application making it, by its token: its standing limits what it makes for this person.
      const link = await links.createLink(owner, input, writingAppOf(request.auth!))
      return reply.code(201).header('location', `/api/links/${link.id}`).send(json(link))
    })

    app.get('/api/links', { config: READ }, async (request) => {
      const page = await links.listLinks(ownerOf(request), parseInput(schemas.listQuery, request.query))
      return { links: page.links.map(json), next_cursor: page.nextCursor ?? null }
    })

    app.get('/api/links/:id', { config: READ }, async (request) => {
      return json(await links.getLink(ownerOf(request), linkId(request)))
    })

    app.patch('/api/links/:id', { config: WRITE }, async (request) => {
      const changes = parseInput(schemas.linkChanges, request.body)
      return json(await links.updateLink(ownerOf(request), linkId(request), changes))
    })

    app.delete('/api/links/:id', { config: WRITE }, async (request, reply) => {
      await links.deleteLink(ownerOf(request), linkId(request))
      return reply.code(204).send()
    })

    app.get('/api/links/:id/stats', { config: READ }, async (request) => {
      const query = parseInput(schemas.statsQuery, request.query)
      return statsJson(await links.linkStats(ownerOf(request), linkId(request), query))
    })

    app.get('/api/tags', { config: READ }, async (request) => ({
      tags: await links.listTags(ownerOf(request)),
    }))
  }
}
