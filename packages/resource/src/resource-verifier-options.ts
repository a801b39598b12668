/**
 * What createResourceVerifier is given, and how it reads it: the option types, their defaults and
 * limits (a bad value is a TypeError at creation, never a failure later), the resource identifier
 * and the DPoP settings in force.
 */
import { createMemoryReplayStore } from './dpop-replay-store.js'
import { DEFAULT_DPOP_ALGORITHMS, type DpopAlgorithm } from './dpop-proof-key.js'
import type { DpopNonceSource } from './dpop-nonce.js'
import type { DpopReplayStore } from './dpop-replay-store.js'
import type { Fetch } from './http.js'
import { consoleLogger, type ResourceLogger } from './logger.js'
import { isResourceIdentifier } from './resource-identifier.js'

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

/** The DPoP settings in force: every default filled in, every limit checked. */
export interface DpopInForce {
  required: boolean
  algorithms: readonly DpopAlgorithm[]
  replayStore: DpopReplayStore
  nonce: DpopNonceSource | undefined
  maxAgeSeconds: number
  clockSkewSeconds: number
}

/** The options as createResourceVerifier uses them: defaults filled in, limits checked. */
export interface VerifierOptionsInForce {
  mode: 'local' | 'introspection'
  credentials: { id: string; secret: string } | undefined
  /** Local mode with the revocation feed. */
  useFeed: boolean
  stalenessMs: number
  cacheSeconds: number
  floorMs: number
  leeway: number
  fetch: Fetch
  logger: ResourceLogger
  resource: string
  /** Undefined when the DPoP scheme is refused. */
  dpop: DpopInForce | undefined
}

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

function dpopSettings(option: DpopSettings | false | undefined): DpopInForce | undefined {
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

/** Reads the options, in this order: mode and credentials, the durations, the resource, DPoP. */
export function readVerifierOptions(options: ResourceVerifierOptions): VerifierOptionsInForce {
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
  const logger = options.logger ?? consoleLogger
  const resource = resourceOf(options, logger)
  const dpop = dpopSettings(options.dpop)
  return {
    mode,
    credentials,
    useFeed,
    stalenessMs,
    cacheSeconds,
    floorMs,
    leeway,
    fetch: options.fetch ?? fetch,
    logger,
    resource,
    dpop,
  }
}
