import {
  createDpopNonceSource,
  DEFAULT_DPOP_ALGORITHMS,
  type DpopReplayStore,
  DpopProofError,
  verifyDpopProof,
} from '@linkauth/resource/dpop'
import type { Redis } from 'ioredis'
import type { Kysely } from 'kysely'
import { createHmac, randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { OAuthError } from '../errors.js'
import { dpopRequired } from '../grants/dpop-binding.js'
import type { Clock } from '../lib/clock.js'
import { rememberDpopProof } from './dpop-proof.repository.js'

/** The algorithms a proof may use at the token endpoint, as metadata lists them. */
export const DPOP_SIGNING_ALGS = DEFAULT_DPOP_ALGORITHMS

/** How old a proof's iat may be, and how far clocks may disagree (both ends), seconds. */
export const DPOP_PROOF_MAX_AGE_SECONDS = 60
export const DPOP_CLOCK_SKEW_SECONDS = 10

/**
 * Server nonces (RFC 9449 §8) change every step; a nonce of this step or the one before is accepted,
 * so a nonce lives 5 to 10 minutes and a client that keeps the latest `DPoP-Nonce` seldom retries.
 */
export const DPOP_NONCE_STEP_SECONDS = 300

const WARN_EVERY_MS = 60_000

export interface DpopDeps {
  config: Pick<
    Config,
    | 'issuer'
    | 'dpopRequired'
    | 'dpopNonceRequired'
    | 'keyEncryptionKey'
    | 'cookieSecret'
    | 'rateLimitRedisPrefix'
  >
  db: Kysely<Database>
  clock: Clock
  logger: Logger
  /** The rate limits' Redis connection, when REDIS_URL is set: proofs seen are kept there. */
  redis?: Redis | undefined
}

/**
 * The proofs seen, shared by every instance: in Redis when it is configured (SET NX with an expiry,
 * one round trip, gone by itself), else in the database (one insert on a primary key; housekeeping
 * deletes expired rows). When Redis does not answer, the database takes over: a proof is then checked
 * against the database only, which every instance shares too.
 */
export function createDpopReplayStore(deps: DpopDeps): DpopReplayStore {
  const database: DpopReplayStore = {
    remember: (key, expiresAt) =>
      rememberDpopProof(deps.db, key, new Date(expiresAt * 1000), deps.clock.now()),
  }
  const redis = deps.redis
  if (!redis) return database
  const prefix = `${deps.config.rateLimitRedisPrefix}dpop:`
  const log = deps.logger.child({ component: 'dpop-replay-store' })
  let lastWarning = -Infinity
  return {
    async remember(key, expiresAt) {
      const ttlMs = Math.max(1000, Math.ceil(expiresAt * 1000 - deps.clock.now().getTime()))
      try {
        return (await redis.set(prefix + key, '1', 'PX', ttlMs, 'NX')) === 'OK'
      } catch (err) {
        if (Date.now() - lastWarning >= WARN_EVERY_MS) {
          lastWarning = Date.now()
          log.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'Redis does not answer: DPoP proofs are checked against the database until it is back',
          )
        }
        return database.remember(key, expiresAt)
      }
    },
  }
}

/**
 * Rotating server nonces valid on every instance: the toolkit's nonce source (an HMAC of the time
 * step, the step before accepted too) under a key derived from the key-encryption key (or the cookie
 * secret), which every instance shares. Without either (a single process with generated secrets in
 * tests), a random key of this process.
 */
export function createDpopNonces(config: Pick<Config, 'keyEncryptionKey' | 'cookieSecret'>, clock: Clock) {
  const secret = config.keyEncryptionKey ?? config.cookieSecret ?? randomBytes(32).toString('base64url')
  const source = createDpopNonceSource({
    secret: createHmac('sha256', secret).update('linkauth DPoP nonce v1').digest(),
    periodSeconds: DPOP_NONCE_STEP_SECONDS,
    now: () => clock.now().getTime() / 1000,
  })
  return { current: () => source.current(), isValid: (nonce: string) => source.accepts(nonce) }
}

/**
 * DPoP at the token endpoint (RFC 9449 §5) and the PAR endpoint (§10.1): the proof's checks (the toolkit's verifyDpopProof, the
 * one home of §4.3), the nonce when DPOP_NONCE_REQUIRED, the deployment's requirement. A refused
 * proof is an OAuthError with the RFC's code; a request without a proof costs nothing here.
 */
export function createDpopService(deps: DpopDeps) {
  const { config, clock } = deps
  const replayStore = createDpopReplayStore(deps)
  const nonces = createDpopNonces(config, clock)
  const tokenEndpoint = `${config.issuer}/api/oauth/token`
  const parEndpoint = `${config.issuer}/api/oauth/par`
  const checkNonce = config.dpopNonceRequired ? (nonce: string) => nonces.isValid(nonce) : undefined

  /** The proof's checks for a POST to `url`; its key thumbprint. Throws OAuthError with the RFC's code. */
  async function proofKey(header: string | string[], url: string): Promise<string> {
    try {
      const { jkt } = await verifyDpopProof(header, {
        method: 'POST',
        url,
        now: clock.now().getTime() / 1000,
        maxAgeSeconds: DPOP_PROOF_MAX_AGE_SECONDS,
        clockSkewSeconds: DPOP_CLOCK_SKEW_SECONDS,
        algorithms: DPOP_SIGNING_ALGS,
        nonce: checkNonce,
        replayStore,
      })
      return jkt
    } catch (err) {
      if (err instanceof DpopProofError) throw new OAuthError(err.error, err.description)
      throw err
    }
  }

  return {
    algorithms: DPOP_SIGNING_ALGS,
    /** The nonce for a `DPoP-Nonce` header; undefined when nonces are not required. */
    nonce: (): string | undefined => (config.dpopNonceRequired ? nonces.current() : undefined),

    /**
     * The key thumbprint (jkt) of the token request's DPoP proof; undefined without a `DPoP` header
     * (unless DPOP_REQUIRED). Throws OAuthError invalid_dpop_proof or use_dpop_nonce.
     */
    async tokenRequestKey(header: string | string[] | undefined): Promise<string | undefined> {
      if (header === undefined) {
        if (config.dpopRequired) throw dpopRequired()
        return undefined
      }
      return proofKey(header, tokenEndpoint)
    },

    /**
     * RFC 9449 §10.1: the key thumbprint of a pushed authorization request's DPoP proof (the code is
     * bound to it as by dpop_jkt); undefined without a `DPoP` header, which is never required there.
     */
    async pushedRequestKey(header: string | string[] | undefined): Promise<string | undefined> {
      return header === undefined ? undefined : proofKey(header, parEndpoint)
    },
  }
}

export type DpopService = ReturnType<typeof createDpopService>
