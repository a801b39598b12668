import { type AccessTokenClaims, createJwksTokenVerifier } from './jwks-token-verifier.js'
import { bearerToken } from './authorization-header.js'
import { InsufficientScopeError, invalidToken } from './errors.js'
import { createEventStreamClient } from './event-stream-client.js'
import type { Fetch } from './http.js'
import { createIntrospectionClient, type IntrospectionClient } from './introspection-client.js'
import { createJwksCache } from './jwks-cache.js'
import { consoleLogger, type ResourceLogger } from './logger.js'
import { discoverMetadata } from './metadata.js'
import { isResourceIdentifier } from './resource-identifier.js'
import { createRevocationFeed, type RevocationFeed } from './revocation-feed.js'
import { createRevocationSet } from './revocation-set.js'

/**
 * Which tokens the API accepts: those whose `aud` is its resource identifier (RFC 8707), exactly.
 * `audience` is the name this option had before resource identifiers; it means the same.
 */
export type ResourceVerifierOptions = VerifierSettings &
  (
    | {
        /** The API's resource identifier, as registered with the authorization server. */
        resource: string
        /** @deprecated Use `resource`. When both are given they must be equal. */
        audience?: string
      }
    | {
        /** @deprecated Use `resource`; the same value, under its old name. */
        audience: string
        resource?: string
      }
  )

export interface VerifierSettings {
  /** Metadata at `<issuer>/.well-known/oauth-authorization-server`. */
  issuer: string
  /** Resource-server credentials: for the revocation feed and introspection. */
  credentials?: { id: string; secret: string }
  /** 'local' (default): JWKS and the revocation feed. 'introspection': one call per token (cached). */
  mode?: 'local' | 'introspection'
  /** Default true in local mode when credentials are given. */
  revocationFeed?: boolean
  /** The feed out of contact longer than this: introspection per request until it is back (default 10). */
  maxFeedStalenessSeconds?: number
  /** How long active introspection answers are reused (default 5; 0 = off); never past exp. */
  introspectionCacheSeconds?: number
  /** Leeway on exp, nbf and iat (default 5). */
  clockToleranceSeconds?: number
  /**
   * Minimum time between JWKS fetches caused by an unknown kid (default 1). It bounds what tokens
   * with made-up kids can cost (one fetch a second per verifier), and it is also the longest a
   * token signed with a freshly rotated key can be refused, so it stays short.
   */
  jwksRefetchFloorSeconds?: number
  logger?: ResourceLogger
  fetch?: Fetch
}

export type VerifierMode = 'local' | 'introspection' | 'fallback'

export interface ResourceVerifier {
  /** The resource identifier: the only `aud` accepted. */
  readonly resource: string
  /** The authorization server whose tokens are accepted. */
  readonly issuer: string
  /** Verifies a bare token; throws a ResourceAuthError subclass. requiredScopes all must be granted. */
  verify(token: string, requiredScopes?: readonly string[]): Promise<AccessTokenClaims>
  /** Same, from an Authorization header value (RFC 6750 §2.1: `Bearer <token>`). */
  verifyAuthorization(
    header: string | undefined,
    requiredScopes?: readonly string[],
  ): Promise<AccessTokenClaims>
  /** 'local' | 'introspection' | 'fallback' (local mode while the feed is stale) and feed health. */
  status(): {
    mode: VerifierMode
    feedConnected: boolean
    lastFeedContact: Date | undefined
    revokedIds: number
  }
  /** Counters a test or a metrics page can read. */
  stats(): { introspectionCalls: number; jwksFetches: number; feedEventsReceived: number }
  close(): Promise<void>
}

/** How long creation waits for the feed to deliver the current revocation state before serving. */
const FIRST_SYNC_WAIT_MS = 5_000

function seconds(name: string, value: number | undefined, fallback: number, min = 0): number {
  const v = value ?? fallback
  if (!Number.isFinite(v) || v < min) throw new TypeError(`${name} must be a number of seconds >= ${min}`)
  return v
}

function resourceOf(options: ResourceVerifierOptions, logger: ResourceLogger): string {
  const resource = options.resource ?? options.audience
  if (options.audience !== undefined) {
    if (options.audience !== resource) throw new TypeError('resource and audience name different APIs')
    logger.warn({}, 'createResourceVerifier: the option audience is deprecated; name it resource')
  }
  if (!isResourceIdentifier(resource))
    throw new TypeError(
      'resource must be an absolute https URI (http on a loopback host) without fragment, at most 2048 characters',
    )
  return resource
}

/**
 * Discovers the authorization server, loads its keys and, in local mode with credentials,
 * subscribes to its revocation feed (waiting briefly for the current state). Fails when the
 * metadata or keys cannot be fetched, or when the server lacks an endpoint the options need.
 */
export async function createResourceVerifier(options: ResourceVerifierOptions): Promise<ResourceVerifier> {
  const mode = options.mode ?? 'local'
  const credentials = options.credentials
  const useFeed = mode === 'local' && (options.revocationFeed ?? credentials !== undefined)
  if ((mode === 'introspection' || useFeed) && !credentials)
    throw new TypeError(
      `${mode === 'introspection' ? 'introspection' : 'the revocation feed'} needs credentials`,
    )
  const stalenessMs = seconds('maxFeedStalenessSeconds', options.maxFeedStalenessSeconds, 10, 0.1) * 1000
  const cacheSeconds = seconds('introspectionCacheSeconds', options.introspectionCacheSeconds, 5)
  const floorMs = seconds('jwksRefetchFloorSeconds', options.jwksRefetchFloorSeconds, 1) * 1000
  const leeway = seconds('clockToleranceSeconds', options.clockToleranceSeconds, 5)
  const fetchImpl = options.fetch ?? fetch
  const logger = options.logger ?? consoleLogger
  const resource = resourceOf(options, logger)
  const now = () => new Date()

  const metadata = await discoverMetadata(options.issuer, fetchImpl)
  if ((mode === 'introspection' || useFeed) && !metadata.introspectionEndpoint)
    throw new Error('authorization server metadata: no introspection_endpoint')
  if (useFeed && !metadata.revocationEventStreamsEndpoint)
    throw new Error(
      'authorization server metadata: no revocation_event_streams_endpoint (use revocationFeed: false or mode "introspection")',
    )

  const onError = (err: unknown) =>
    logger.error(
      { err: err instanceof Error ? err.message : String(err) },
      'call to the authorization server failed',
    )
  const jwks = createJwksCache(metadata.jwksUri, { fetch: fetchImpl, refetchFloorMs: floorMs, onError })
  await jwks.load()
  const tokens = createJwksTokenVerifier({
    issuer: options.issuer,
    resource,
    jwks,
    clockToleranceSeconds: leeway,
    now,
  })
  const revocations = createRevocationSet(() => Math.floor(now().getTime() / 1000))
  const introspection: IntrospectionClient | undefined =
    credentials && metadata.introspectionEndpoint && (mode === 'introspection' || useFeed)
      ? createIntrospectionClient({
          endpoint: metadata.introspectionEndpoint,
          credentials,
          cacheSeconds,
          fetch: fetchImpl,
          now,
          onError,
        })
      : undefined
  const feed: RevocationFeed | undefined =
    useFeed && credentials && metadata.revocationEventStreamsEndpoint
      ? createRevocationFeed({
          client: createEventStreamClient({
            streamsEndpoint: metadata.revocationEventStreamsEndpoint,
            credentials,
            fetch: fetchImpl,
          }),
          issuer: options.issuer,
          audience: credentials.id,
          jwks,
          revocations,
          stalenessMs,
          logger,
        })
      : undefined

  // Mode changes are logged when they happen (a timer looks), not only when a request comes.
  let reported: VerifierMode = mode
  function currentMode(): VerifierMode {
    if (mode === 'introspection' || !feed) return mode
    const current: VerifierMode = feed.isCurrent() ? 'local' : 'fallback'
    if (current !== reported) {
      if (current === 'fallback')
        logger.warn(
          {
            lastFeedContact: feed.lastContact?.toISOString() ?? null,
            maxFeedStalenessSeconds: stalenessMs / 1000,
          },
          'revocation feed is not current: checking every access token by introspection',
        )
      else logger.info({}, 'revocation feed is current again: verifying access tokens locally')
      reported = current
    }
    return current
  }

  let watch: NodeJS.Timeout | undefined
  if (feed) {
    feed.start()
    await feed.waitForFirstSync(FIRST_SYNC_WAIT_MS)
    currentMode()
    watch = setInterval(currentMode, Math.min(1000, stalenessMs / 4)).unref()
  }

  async function verify(token: string, requiredScopes: readonly string[] = []): Promise<AccessTokenClaims> {
    const claims = await tokens.verify(token)
    if (revocations.revokedBy(claims))
      throw invalidToken('token_revoked', 'The access token has been revoked.')
    if (currentMode() !== 'local') await introspection!.assertActive(token, claims)
    if (!requiredScopes.every((scope) => claims.scopes.includes(scope)))
      throw new InsufficientScopeError(requiredScopes)
    return claims
  }

  return {
    resource,
    issuer: options.issuer,
    verify,
    verifyAuthorization: async (header, requiredScopes) => verify(bearerToken(header), requiredScopes),
    status: () => ({
      mode: currentMode(),
      feedConnected: feed?.connected ?? false,
      lastFeedContact: feed?.lastContact,
      revokedIds: revocations.size,
    }),
    stats: () => ({
      introspectionCalls: introspection?.calls ?? 0,
      jwksFetches: jwks.fetches,
      feedEventsReceived: feed?.eventsReceived ?? 0,
    }),
    async close() {
      clearInterval(watch)
      await feed?.close()
    },
  }
}
