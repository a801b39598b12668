import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { STYLESHEET } from './style.js'

const ETAG = `"${createHash('sha256').update(STYLESHEET).digest('base64url').slice(0, 16)}"`

export async function staticRoutes(app: FastifyInstance): Promise<void> {
  app.get('/static/style.css', async (request, reply) => {
    reply.header('cache-control', 'public, max-age=3600').header('etag', ETAG)
    if (request.headers['if-none-match'] === ETAG) return reply.code(304).send()
    return reply.type('text/css; charset=utf-8').send(STYLESHEET)
  })
}
