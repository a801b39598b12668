import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { parseInput } from '../../../shared/parse.js'
import { notFoundPage, visitorPage } from '../../../shared/pages.js'
import { formatMinor } from '../money/money.js'
import { ECOMMERCE, noStore, ownerOf } from '../web/owner.js'
import { campaignName, type LinkInputSchemas } from './link-input.js'
import type { EcommerceLink, LinkService, Revenue, Stats } from './link.service.js'

export function linkJson(link: EcommerceLink, publicUrl: string) {
  return {
    id: link.id,
    slug: link.slug,
    short_url: `${publicUrl}/${link.slug}`,
    product_id: link.productId,
    target_url: link.targetUrl,
    campaign: link.campaign,
    utm: link.utm,
    clicks: link.clicks,
    created_at: link.createdAt.toISOString(),
    archived_at: link.archivedAt?.toISOString() ?? null,
  }
}

const revenueJson = (revenue: Revenue[]) =>
  revenue.map((r) => ({
    currency: r.currency,
    value_minor: r.valueMinor.toString(),
    value: formatMinor(r.valueMinor, r.currency),
  }))

function statsJson(stats: Stats) {
  return {
    from: stats.from,
    to: stats.to,
    clicks: stats.clicks,
    conversions: stats.conversions,
    conversion_rate: stats.conversionRate,
    revenue: revenueJson(stats.revenue),
    days: stats.days.map((d) => ({
      date: d.date,
      clicks: d.clicks,
      conversions: d.conversions,
      revenue: revenueJson(d.revenue),
    })),
  }
}

const campaignParam = z.strictObject({ campaign: campaignName })

/** E-commerce links (ecommerce:write): create, list, read, change or archive, statistics per link and per campaign. */
export function linkRoutes(links: LinkService, schemas: LinkInputSchemas, publicUrl: string) {
  const json = (link: EcommerceLink) => linkJson(link, publicUrl)
  const linkId = (request: FastifyRequest) => (request.params as { id: string }).id
  return async (app: FastifyInstance) => {
    noStore(app)

    app.post('/api/links', { config: ECOMMERCE }, async (request, reply) => {
      const link = await links.createLink(ownerOf(request), parseInput(schemas.newLink, request.body))
      return reply.code(201).header('location', `/api/links/${link.id}`).send(json(link))
    })

    app.get('/api/links', { config: ECOMMERCE }, async (request) => {
      const page = await links.listLinks(
        ownerOf(request),
        parseInput(schemas.listQuery, request.query, 'query'),
      )
      return { links: page.links.map(json), next_cursor: page.nextCursor ?? null }
    })

    app.get('/api/links/:id', { config: ECOMMERCE }, async (request) =>
      json(await links.getLink(ownerOf(request), linkId(request))),
    )

    app.patch('/api/links/:id', { config: ECOMMERCE }, async (request) => {
      const changes = parseInput(schemas.linkChanges, request.body)
      return json(await links.updateLink(ownerOf(request), linkId(request), changes))
    })

    app.get('/api/links/:id/stats', { config: ECOMMERCE }, async (request) => {
      const query = parseInput(schemas.statsQuery, request.query, 'query')
      const { link, stats } = await links.linkStats(ownerOf(request), linkId(request), query)
      return { link_id: link.id, campaign: link.campaign, ...statsJson(stats) }
    })

    app.get('/api/campaigns', { config: ECOMMERCE }, async (request) => ({
      campaigns: await links.listCampaigns(ownerOf(request)),
    }))

    app.get('/api/campaigns/:campaign/stats', { config: ECOMMERCE }, async (request) => {
      const { campaign } = parseInput(campaignParam, request.params, 'query')
      const query = parseInput(schemas.statsQuery, request.query, 'query')
      const { links: count, stats } = await links.campaignStats(ownerOf(request), campaign, query)
      return { campaign, links: count, ...statsJson(stats) }
    })
  }
}

/**
 * `GET /:slug`: the short URL itself, public. Records a click and answers 302 to the target with the
 * UTM values and the click id (`lclid`); HEAD (link previews, monitors) answers the same without a
 * click id and counts nothing. `no-store`, so every visit reaches us and is counted. An archived
 * link answers 410 with a page, and counts nothing.
 */
export function redirectRoutes(links: LinkService) {
  return async (app: FastifyInstance) => {
    app.get('/:slug', async (request, reply) => {
      const { slug } = request.params as { slug: string }
      const destination = await links.follow(slug, { count: request.method === 'GET' })
      if (destination === undefined) return notFoundPage(reply)
      if (destination.archived) return visitorPage(reply, 410)
      return reply
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .redirect(destination.url, 302)
    })
  }
}
