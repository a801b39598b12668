import type { FastifyInstance, FastifyRequest } from 'fastify'
import { invalidRequest } from '../errors.js'

/**
 * CORS (Fetch standard) for browser-only applications, on the token, revocation, metadata and JWKS
 * endpoints only: never on pages, the account API or the admin API, and never with credentials
 * (no cookie is read on these endpoints, so none is ever asked for).
 */

/** DPoP (RFC 9449) is listed before it lands, so that preflights browsers cache stay right when it does. */
const ALLOW_HEADERS = 'Content-Type, Authorization, DPoP'
/** Beyond the CORS-safelisted ones: an error's challenge, a rate limit's wait, DPoP's nonce. */
const EXPOSE_HEADERS = 'WWW-Authenticate, Retry-After, DPoP-Nonce'
/** A browser reuses a preflight this long; every actual request is checked anyway. */
const MAX_AGE_SECONDS = '600'

/** The registered clients' origins, as the client service keeps them in memory. */
export interface ClientOriginCheck {
  isRegisteredOrigin(origin: string): Promise<boolean>
  isOriginOf(origin: string, clientId: string): Promise<boolean | undefined>
}

const originRefused = () =>
  invalidRequest('This origin is not the origin of a redirect URI registered for the client.')

/**
 * Token and revocation endpoints: the answer carries `Access-Control-Allow-Origin: <Origin>` when the
 * Origin is that of a redirect URI of an enabled client. Each request's origin is checked once:
 *
 * - a preflight carries no body, hence no client_id, so it can only ask for any client's origin;
 * - a request that names its client (`assertOriginOf`, before the endpoint acts) must come from one
 *   of that client's own origins; an unknown client, or none named, falls back to any client's;
 * - an answer given before the client was known (a body that does not parse, a wrong media type, a
 *   rate limit) is checked as it is sent, so that a registered page can read why it failed.
 *
 * A refused origin gets no CORS headers, so the page reads nothing. A request from it is refused
 * before it is acted on: a form POST needs no preflight, and a browser would otherwise spend a code
 * or a refresh token whose answer the page may not read. A request without Origin (not a browser)
 * or from the issuer's own origin (same-origin) is not CORS and costs nothing here.
 */
export function clientEndpointCors(
  app: FastifyInstance,
  options: { path: string; issuer: string; origins: ClientOriginCheck },
) {
  const issuerOrigin = new URL(options.issuer).origin
  const crossOrigin = (request: FastifyRequest) => {
    const origin = request.headers.origin
    return origin === undefined || origin === issuerOrigin ? undefined : origin
  }
  /** Whether the request's origin was allowed, once it was checked. */
  const decided = new WeakMap<FastifyRequest, boolean>()
  const decide = (request: FastifyRequest, allowed: boolean) => {
    decided.set(request, allowed)
    if (!allowed) throw originRefused()
  }
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('vary', 'Origin')
  })
  app.addHook('onSend', async (request, reply, payload) => {
    const origin = crossOrigin(request)
    if (origin === undefined) return payload
    const allowed = decided.get(request) ?? (await options.origins.isRegisteredOrigin(origin))
    if (allowed)
      reply
        .header('access-control-allow-origin', origin)
        .header('access-control-expose-headers', EXPOSE_HEADERS)
    return payload
  })
  app.options(options.path, async (request, reply) => {
    reply.header('allow', 'OPTIONS, POST')
    const origin = crossOrigin(request)
    if (origin !== undefined) {
      decide(request, await options.origins.isRegisteredOrigin(origin))
      reply
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', ALLOW_HEADERS)
        .header('access-control-max-age', MAX_AGE_SECONDS)
    }
    return reply.code(204).send()
  })
  return {
    /** Before the endpoint acts: a cross-origin request must come from one of its client's origins. */
    async assertOriginOf(request: FastifyRequest, clientId: string | undefined): Promise<void> {
      const origin = crossOrigin(request)
      if (origin === undefined) return
      const own = clientId === undefined ? undefined : await options.origins.isOriginOf(origin, clientId)
      // No client named, or none enabled by that id (the endpoint answers invalid_client): any client's.
      decide(request, own ?? (await options.origins.isRegisteredOrigin(origin)))
    },
  }
}

/**
 * Metadata and JWKS are public documents, the same for everyone and cached by shared caches for an
 * hour: `Access-Control-Allow-Origin: *` (no Vary needed, no credentials possible) for any origin.
 */
export function publicDocumentCors(app: FastifyInstance, path: string): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*')
  })
  app.options(path, async (_request, reply) =>
    reply
      .code(204)
      .header('allow', 'GET, HEAD, OPTIONS')
      .header('access-control-allow-methods', 'GET, HEAD')
      .header('access-control-allow-headers', ALLOW_HEADERS)
      .header('access-control-max-age', MAX_AGE_SECONDS)
      .send(),
  )
}
