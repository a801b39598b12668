/**
 * createResourceVerifier: the wiring of what accepts an API's access tokens. It reads the options
 * (resource-verifier-options.ts), discovers the authorization server, loads its keys, subscribes to
 * its revocation feed and watches it (verifier-mode.ts), and checks each token by the rules of
 * request-verification.ts.
 */
import { type AccessTokenClaims, createJwksTokenVerifier } from './jwks-token-verifier.js'
import { bearerToken } from './authorization-header.js'
import type { DpopAlgorithm } from './dpop-proof-key.js'
import type { DpopNonceSource } from './dpop-nonce.js'
import { createEventStreamClient } from './event-stream-client.js'
import { createIntrospectionClient, type IntrospectionClient } from './introspection-client.js'
import { createJwksCache } from './jwks-cache.js'
import type { ResourceLogger } from './logger.js'
import { type AuthorizationServerMetadata, discoverMetadata } from './metadata.js'
import {
  type ResourceRequest,
  type VerificationDeps,
  verifyBearer,
  verifyRequest,
} from './request-verification.js'
import { readVerifierOptions, type ResourceVerifierOptions } from './resource-verifier-options.js'
import { createRevocationFeed, type RevocationFeed } from './revocation-feed.js'
import { createRevocationSet } from './revocation-set.js'
import { type VerifierMode, watchMode } from './verifier-mode.js'

export type { DpopSettings, ResourceVerifierOptions, VerifierSettings } from './resource-verifier-options.js'
export type { ResourceRequest } from './request-verification.js'
export type { VerifierMode } from './verifier-mode.js'

export interface ResourceVerifier {
  /** The resource identifier: the `aud` accepted (alone, or in a list unless `soleAudience`). */
  readonly resource: string
  /** The authorization server whose tokens are accepted. */
  readonly issuer: string
  /** Verifies a bare token; throws a ResourceAuthError subclass. requiredScopes all must be granted. */
  verify(token: string, requiredScopes?: readonly string[]): Promise<AccessTokenClaims>
  /**
   * Same, from an Authorization header value (RFC 6750 §2.1: `Bearer <token>`). A DPoP-bound token
   * is refused here: it needs its proof, which only {@link verifyRequest} sees.
   */
  verifyAuthorization(
    header: string | undefined,
    requiredScopes?: readonly string[],
  ): Promise<AccessTokenClaims>
  /**
   * A whole request: a bearer token, or a DPoP-bound token with its proof (RFC 9449 §7.1: the proof
   * verified for this method and URL with `ath`, and made with the key in the token's `cnf.jkt`).
   * A refused request throws a ResourceAuthError whose `scheme` says which challenge to answer with.
   */
  verifyRequest(request: ResourceRequest, requiredScopes?: readonly string[]): Promise<AccessTokenClaims>
  /** The DPoP settings in force, or undefined when the DPoP scheme is refused. */
  readonly dpop:
    Readonly<{ required: boolean; algorithms: readonly DpopAlgorithm[]; nonce?: DpopNonceSource }> | undefined
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

/**
 * Once, at start: an API whose identifier the authorization server does not list among its
 * `protected_resources` (RFC 9728 §4) is not registered there (or is disabled, or is spelled
 * differently), so clients naming it get `invalid_target` and tokens asked for without `resource`
 * do not carry it. A server that publishes no list is not judged.
 */
function warnIfUnregistered(
  metadata: AuthorizationServerMetadata,
  resource: string,
  logger: ResourceLogger,
): void {
  if (!metadata.protectedResources || metadata.protectedResources.includes(resource)) return
  logger.warn(
    { resource, issuer: metadata.issuer, protectedResources: metadata.protectedResources },
    "this API's resource identifier is not among the authorization server's protected_resources: " +
      'clients cannot name it as resource, and tokens asked for without resource list it only if it ' +
      "is that server's default audience (ACCESS_TOKEN_AUDIENCE). Register it there with this resource " +
      'and the scopes the API serves: linkauth resource-servers create --name … --resource … --scope …',
  )
}

/**
 * Discovers the authorization server, loads its keys and, in local mode with credentials,
 * subscribes to its revocation feed (waiting briefly for the current state). Fails when the
 * metadata or keys cannot be fetched, or when the server lacks an endpoint the options need.
 */
export async function createResourceVerifier(options: ResourceVerifierOptions): Promise<ResourceVerifier> {
  const read = readVerifierOptions(options)
  const { mode, credentials, useFeed, stalenessMs, cacheSeconds, floorMs, leeway, logger, resource, dpop } =
    read
  const fetchImpl = read.fetch
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
  warnIfUnregistered(metadata, resource, logger)
  const jwks = createJwksCache(metadata.jwksUri, { fetch: fetchImpl, refetchFloorMs: floorMs, onError })
  await jwks.load()
  const tokens = createJwksTokenVerifier({
    issuer: options.issuer,
    resource,
    soleAudience: options.soleAudience ?? false,
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

  const modeWatch = await watchMode({ mode, feed, logger, stalenessMs })
  const currentMode = modeWatch.current
  const deps: VerificationDeps = { tokens, revocations, introspection, currentMode, dpop, now }
  const verify = async (token: string, requiredScopes: readonly string[] = []): Promise<AccessTokenClaims> =>
    verifyBearer(deps, token, requiredScopes)

  return {
    resource,
    issuer: options.issuer,
    verify,
    verifyAuthorization: async (header, requiredScopes) => verify(bearerToken(header), requiredScopes),
    verifyRequest: async (request: ResourceRequest, requiredScopes: readonly string[] = []) =>
      verifyRequest(deps, request, requiredScopes),
    dpop: dpop && { required: dpop.required, algorithms: dpop.algorithms, nonce: dpop.nonce },
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
      modeWatch.stop()
      await feed?.close()
    },
  }
}
