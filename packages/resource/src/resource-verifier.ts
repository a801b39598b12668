import { type AccessTokenClaims, createJwksTokenVerifier } from './jwks-token-verifier.js'
import { authorizationToken, bearerToken } from './authorization-header.js'
import {
  createMemoryReplayStore,
  DEFAULT_DPOP_ALGORITHMS,
  type DpopAlgorithm,
  DpopProofError,
  type DpopReplayStore,
  verifyDpopProof,
} from './dpop.js'
import type { DpopNonceSource } from './dpop-nonce.js'
import {
  DpopProofRefusedError,
  InsufficientScopeError,
  invalidToken,
  missingToken,
  ResourceAuthError,
} from './errors.js'
import { createEventStreamClient } from './event-stream-client.js'
import type { Fetch } from './http.js'
import { createIntrospectionClient, type IntrospectionClient } from './introspection-client.js'
import { createJwksCache } from './jwks-cache.js'
import { consoleLogger, type ResourceLogger } from './logger.js'
import { type AuthorizationServerMetadata, discoverMetadata } from './metadata.js'
import { isResourceIdentifier } from './resource-identifier.js'
import { createRevocationFeed, type RevocationFeed } from './revocation-feed.js'
import { createRevocationSet } from './revocation-set.js'

/**
 * Which tokens the API accepts: those whose `aud` is its resource identifier (RFC 8707), or a list
 * that contains it exactly (RFC 9068 §4: a token asked for without `resource` is for every API that
 * serves one of its scopes); with `soleAudience`, only tokens for it alone. `audience` is the name
 * `resource` had before resource identifiers; it means the same.
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

/**
 * DPoP (RFC 9449 §7): how the API checks the proof that comes with a DPoP-bound access token. A
 * bound token (one with `cnf.jkt`) is only ever accepted with a proof made with its key.
 */
export interface DpopSettings {
  /** Refuse plain bearer tokens: only DPoP-bound tokens are accepted (default false: both). */
  required?: boolean
  /** Proof algorithms accepted (default ES256, EdDSA, Ed25519, PS256); asymmetric only. */
  algorithms?: readonly DpopAlgorithm[]
  /**
   * Where accepted proofs' jtis are kept (default: this process's memory). Several instances of one
   * API need one they share, e.g. `createRedisReplayStore(redis)`, or a proof refused by one
   * instance as a replay is accepted by another.
   */
  replayStore?: DpopReplayStore
  /** Ask for a server nonce in every proof (§9), e.g. `createDpopNonceSource({ secret })`. */
  nonce?: DpopNonceSource
  /** How old a proof's iat may be (default 60 s) and the clock skew allowed each way (default 10 s). */
  maxAgeSeconds?: number
  clockSkewSeconds?: number
}

/** The parts of an HTTP request that authenticate it. */
export interface ResourceRequest {
  /** The Authorization header: `Bearer <token>` or `DPoP <token>`. */
  authorization: string | undefined
  /** The DPoP header(s), as the framework gives them (several are refused). */
  dpop?: string | string[] | undefined
  /** The method and the URL the client called (public scheme, host, path), for `htm` and `htu`. */
  method: string
  url: string | URL
}

export interface VerifierSettings {
  /** Metadata at `<issuer>/.well-known/oauth-authorization-server`. */
  issuer: string
  /**
   * Accept only tokens whose `aud` is this API alone, those a client asked for with `resource`
   * (default false: also tokens asked for without it, whose `aud` lists every API that serves one of
   * their scopes). For an API run by a third party: a token that other APIs accept too could have
   * been replayed here by one of them, and clients of such an API should name it anyway.
   */
  soleAudience?: boolean
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
  /** DPoP-bound tokens (RFC 9449): accepted with a proof by default; `false` refuses the DPoP scheme. */
  dpop?: DpopSettings | false
}

export type VerifierMode = 'local' | 'introspection' | 'fallback'

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

function dpopSettings(option: DpopSettings | false | undefined) {
  if (option === false) return undefined
  return {
    required: option?.required ?? false,
    algorithms: option?.algorithms ?? DEFAULT_DPOP_ALGORITHMS,
    replayStore: option?.replayStore ?? createMemoryReplayStore(),
    nonce: option?.nonce,
    maxAgeSeconds: seconds('dpop.maxAgeSeconds', option?.maxAgeSeconds, 60, 1),
    clockSkewSeconds: seconds('dpop.clockSkewSeconds', option?.clockSkewSeconds, 10),
  }
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
  const dpop = dpopSettings(options.dpop)

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

  /** The token itself: signature, claims, the revocation set, introspection when the feed is stale. */
  async function activeClaims(token: string): Promise<AccessTokenClaims> {
    const claims = await tokens.verify(token)
    if (revocations.revokedBy(claims))
      throw invalidToken('token_revoked', 'The access token has been revoked.')
    if (currentMode() !== 'local') await introspection!.assertActive(token, claims)
    return claims
  }

  function withScopes(claims: AccessTokenClaims, requiredScopes: readonly string[]): AccessTokenClaims {
    if (!requiredScopes.every((scope) => claims.scopes.includes(scope)))
      throw new InsufficientScopeError(requiredScopes)
    return claims
  }

  /** RFC 9449 §7.2: a bound token must come with its proof; as a bearer token it is refused. */
  async function verifyBearer(token: string, requiredScopes: readonly string[]): Promise<AccessTokenClaims> {
    if (dpop?.required)
      throw invalidToken('dpop_required', 'This API accepts DPoP-bound access tokens only.').as('DPoP')
    const claims = await activeClaims(token)
    if (claims.cnf)
      throw invalidToken(
        'dpop_bound_token',
        'The access token is DPoP-bound: send it with the DPoP scheme and a DPoP proof.',
      )
    return withScopes(claims, requiredScopes)
  }

  async function verifyDpop(
    request: ResourceRequest,
    token: string,
    requiredScopes: readonly string[],
  ): Promise<AccessTokenClaims> {
    const settings = dpop!
    const claims = await activeClaims(token)
    if (!claims.cnf)
      throw invalidToken('token_not_bound', 'The access token is not DPoP-bound; send it as a Bearer token.')
    let jkt: string
    try {
      ;({ jkt } = await verifyDpopProof(request.dpop, {
        method: request.method,
        url: request.url,
        accessToken: token,
        algorithms: settings.algorithms,
        replayStore: settings.replayStore,
        nonce: settings.nonce ? (n) => settings.nonce!.accepts(n) : undefined,
        now: now().getTime() / 1000,
        maxAgeSeconds: settings.maxAgeSeconds,
        clockSkewSeconds: settings.clockSkewSeconds,
      }))
    } catch (err) {
      if (!(err instanceof DpopProofError)) throw err
      throw new DpopProofRefusedError(
        err.error,
        err.error === 'use_dpop_nonce'
          ? 'The API requires a fresh DPoP nonce in the proof.'
          : err.description,
        err.code,
      )
    }
    // §7.1: "Invalid DPoP key binding" is an invalid_token, in a DPoP challenge.
    if (jkt !== claims.cnf.jkt)
      throw invalidToken(
        'dpop_key_mismatch',
        'The DPoP proof was not made with the key the access token is bound to.',
      ).as('DPoP')
    return withScopes(claims, requiredScopes)
  }

  async function verify(token: string, requiredScopes: readonly string[] = []): Promise<AccessTokenClaims> {
    return verifyBearer(token, requiredScopes)
  }

  async function verifyRequest(
    request: ResourceRequest,
    requiredScopes: readonly string[] = [],
  ): Promise<AccessTokenClaims> {
    const { scheme, token } = authorizationToken(request.authorization)
    if (scheme === 'Bearer') return verifyBearer(token, requiredScopes)
    // The DPoP scheme where it is refused: no credentials this API takes (RFC 7235 §2.1).
    if (!dpop) throw missingToken()
    try {
      return await verifyDpop(request, token, requiredScopes)
    } catch (err) {
      // Whatever is wrong with a DPoP request is answered with a DPoP challenge (§7.1).
      throw err instanceof ResourceAuthError ? err.as('DPoP') : err
    }
  }

  return {
    resource,
    issuer: options.issuer,
    verify,
    verifyAuthorization: async (header, requiredScopes) => verify(bearerToken(header), requiredScopes),
    verifyRequest,
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
      clearInterval(watch)
      await feed?.close()
    },
  }
}
