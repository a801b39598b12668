/**
 * DPoP proofs (RFC 9449): the checks of §4.3 in one place, for the authorization server's token
 * endpoint and for resource APIs alike. `@linkauth/resource/dpop` exports it on its own so that the
 * server needs nothing else of the toolkit. This module is that entry point: the checks of one
 * proof are in dpop-proof.ts (its key: dpop-proof-key.ts; its refusals: dpop-proof-error.ts), the
 * state that lasts between proofs in dpop-replay-store.ts (the jtis seen) and dpop-nonce.ts.
 *
 * ```ts
 * import { createMemoryReplayStore, DpopProofError, verifyDpopProof } from '@linkauth/resource/dpop'
 *
 * const replayStore = createMemoryReplayStore() // one per process; share a database/Redis one across instances
 * try {
 *   const { jkt } = await verifyDpopProof(request.headers.dpop, {
 *     method: request.method,
 *     url: 'https://api.example.com/links', // the URL the client called, as the client saw it
 *     accessToken, // when a DPoP-bound access token comes with the request (checks `ath`)
 *     replayStore,
 *   })
 *   // a resource API then compares jkt with the token's cnf.jkt (§7.1)
 * } catch (err) {
 *   if (err instanceof DpopProofError) reply.code(400).send(err.toJSON()) // err.error: invalid_dpop_proof | use_dpop_nonce
 *   else throw err // only the replay store's own failure lands here
 * }
 * ```
 */
export { type DpopErrorCode, type DpopFailure, DpopProofError } from './dpop-proof-error.js'
export {
  DEFAULT_DPOP_ALGORITHMS,
  DPOP_ASYMMETRIC_ALGORITHMS,
  type DpopAlgorithm,
  jwkThumbprint,
} from './dpop-proof-key.js'
export {
  accessTokenHash,
  DPOP_PROOF_TYPE,
  type DpopProofCheck,
  MAX_DPOP_PROOF_LENGTH,
  normalizeHtu,
  type VerifiedDpopProof,
  verifyDpopProof,
} from './dpop-proof.js'
export {
  createMemoryReplayStore,
  createRedisReplayStore,
  type DpopReplayStore,
  DpopReplayStoreFullError,
  type MemoryReplayStoreOptions,
  type RedisSetNx,
} from './dpop-replay-store.js'
export { createDpopNonceSource, type DpopNonceOptions, type DpopNonceSource } from './dpop-nonce.js'
