import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { brandStylesheet, type BrandLogo } from './brand.js'
import { FAVICON } from './favicon.js'
import { PASSKEYS_SCRIPT } from './passkeys-script.js'
import { STYLESHEET } from './style.js'

const etag = (body: string | Buffer) =>
  `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`

const HOUR = { 'cache-control': 'public, max-age=3600' }

/** Our own files, from memory, cached for an hour (unless `headers` say otherwise) and revalidated by ETag. */
function staticFile(body: string | Buffer, type: string, headers: Record<string, string> = HOUR) {
  const tag = etag(body)
  return async (request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(headers).header('etag', tag)
    if (request.headers['if-none-match'] === tag) return reply.code(304).send()
    return reply.type(type).send(body)
  }
}

/**
 * The operator's logo (BRAND_LOGO): its path holds its content hash, so it is cached for a year. An
 * SVG opened on its own runs nothing: its policy allows its inline styles and nothing else.
 */
function logoFile(logo: BrandLogo) {
  return staticFile(logo.body, logo.type, {
    'cache-control': 'public, max-age=31536000, immutable',
    ...(logo.type === 'image/svg+xml'
      ? { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox" }
      : {}),
  })
}

export async function staticRoutes(app: FastifyInstance): Promise<void> {
  app.get('/static/style.css', staticFile(brandStylesheet(STYLESHEET, app.brand), 'text/css; charset=utf-8'))
  app.get('/static/passkeys.js', staticFile(PASSKEYS_SCRIPT, 'text/javascript; charset=utf-8'))
  // Browsers ask for it on every page: an icon, not a 404 in the log and the console.
  app.get('/favicon.ico', staticFile(FAVICON, 'image/x-icon'))
  if (app.brand.logo) app.get(app.brand.logo.path, logoFile(app.brand.logo))
}
