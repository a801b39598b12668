import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { FAVICON } from './favicon.js'
import { PASSKEYS_SCRIPT } from './passkeys-script.js'
import { STYLESHEET } from './style.js'

const etag = (body: string | Buffer) =>
  `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`

/** Our own files, from memory, cached for an hour and revalidated by ETag. */
function staticFile(body: string | Buffer, type: string) {
  const tag = etag(body)
  return async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'public, max-age=3600').header('etag', tag)
    if (request.headers['if-none-match'] === tag) return reply.code(304).send()
    return reply.type(type).send(body)
  }
}

export async function staticRoutes(app: FastifyInstance): Promise<void> {
  app.get('/static/style.css', staticFile(STYLESHEET, 'text/css; charset=utf-8'))
  app.get('/static/passkeys.js', staticFile(PASSKEYS_SCRIPT, 'text/javascript; charset=utf-8'))
  // Browsers ask for it on every page: an icon, not a 404 in the log and the console.
  app.get('/favicon.ico', staticFile(FAVICON, 'image/x-icon'))
}
