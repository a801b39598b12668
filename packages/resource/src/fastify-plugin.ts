import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AccessTokenClaims } from './jwks-token-verifier.js'
import { queryTokenError } from './authorization-header.js'
import { type ChallengeContext, ResourceAuthError } from './errors.js'
import { refusalOf } from './protected-endpoint.js'
import { protectedResourceMetadata } from './protected-resource-metadata.js'
import { protectedResourceMetadataUrl } from './resource-identifier.js'
import type { ResourceVerifier } from './resource-verifier.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scopes a route needs, all of them; `[]` = any valid token. Without it the route is public. */
    scopes?: readonly string[]
  }
  interface FastifyRequest {
    /** The verified access token's claims on a route with `config.scopes`; undefined elsewhere. */
    auth: AccessTokenClaims | undefined
  }
}

export interface LinkauthResourceOptions {
  verifier: ResourceVerifier
  /** The realm of WWW-Authenticate challenges (RFC 6750 §3). */
  realm?: string
  /** `resource_name` of the metadata document (RFC 9728 §2): the API's name, for people. */
  resourceName?: string
  /**
   * `scopes_supported` of the metadata document. Default: every scope the routes declare in
   * `config.scopes`, in the order they first appear.
   */
  scopesSupported?: readonly string[]
  /**
   * The URL clients call the API at (scheme, host and any path prefix in front of the routes): a
   * DPoP proof's `htu` must name it (RFC 9449 §4.3). Default: the origin of the resource identifier.
   */
  publicUrl?: string
}

function refuse(
  reply: FastifyReply,
  err: ResourceAuthError,
  context: ChallengeContext,
  verifier: ResourceVerifier,
): FastifyReply {
  const refusal = refusalOf(err, context, verifier)
  return reply.code(refusal.status).headers(refusal.headers).send(refusal.body)
}

/**
 * RFC 9728 §3: the metadata document at the URL its §3.1 derives from the resource identifier, and
 * only there: a client checks that a document's `resource` is the identifier it derived the URL from
 * (§3.3), so the bare well-known path belongs to a resource without a path, not to every API of the
 * origin (an MCP server beside the API has its own). Public and the same for everyone, so it may be
 * cached and fetched from a browser on another origin.
 */
function serveMetadata(app: FastifyInstance, options: LinkauthResourceOptions, declared: Set<string>): void {
  const { resource, issuer } = options.verifier
  const path = new URL(protectedResourceMetadataUrl(resource)).pathname
  // find-my-way reads ':' as the start of a parameter; '::' is a literal one.
  app.get(path.replaceAll(':', '::'), async (_request, reply) =>
    reply
      .header('cache-control', 'public, max-age=3600')
      .header('access-control-allow-origin', '*')
      .send(
        protectedResourceMetadata({
          resource,
          issuer,
          scopes: options.scopesSupported ?? [...declared],
          resourceName: options.resourceName,
          dpop: options.verifier.dpop,
        }),
      ),
  )
}

/**
 * Checks the bearer token of every route that declares `config: { scopes: [...] }` in an onRequest
 * hook, so a refused request is answered before its body is read and its handler never runs. The
 * verified claims are `request.auth`. Every challenge names the metadata document (RFC 9728 §5.1),
 * which the plugin serves, so a client can find the authorization server from the API alone.
 * Wrapped in fastify-plugin so the hook and the decorator apply to the routes of the app that
 * registers it.
 */
const plugin: FastifyPluginAsync<LinkauthResourceOptions> = async (app, options) => {
  const context: ChallengeContext = {
    realm: options.realm,
    resourceMetadata: protectedResourceMetadataUrl(options.verifier.resource),
  }
  const publicUrl = (options.publicUrl ?? new URL(options.verifier.resource).origin).replace(/\/+$/, '')
  const declared = new Set<string>()
  app.addHook('onRoute', (route) => {
    const scopes = (route.config as { scopes?: readonly string[] } | undefined)?.scopes
    for (const scope of scopes ?? []) declared.add(scope)
  })
  serveMetadata(app, options, declared)

  app.decorateRequest('auth', undefined)
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const scopes = request.routeOptions.config.scopes
    if (scopes === undefined) return
    try {
      const header = request.headers.authorization
      const query = request.query
      if (typeof query === 'object' && query !== null && 'access_token' in query)
        throw queryTokenError(header !== undefined)
      request.auth = await options.verifier.verifyRequest(
        {
          authorization: header,
          dpop: request.headers.dpop,
          method: request.method,
          url: publicUrl + request.url,
        },
        scopes,
      )
    } catch (err) {
      if (!(err instanceof ResourceAuthError)) throw err
      return refuse(reply, err, context, options.verifier)
    }
  })
}

export const linkauthResource = fp(plugin, { fastify: '5.x', name: 'linkauth-resource' })
