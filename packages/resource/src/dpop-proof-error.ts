/**
 * Why a DPoP proof (RFC 9449) is refused: the RFC's error code and a finer, stable reason. Thrown by
 * the checks of dpop-proof.ts and dpop-proof-key.ts.
 */

/** The RFC 9449 error code a client sees: a bad proof, or "retry with this server nonce" (§8). */
export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce'

/** Why a proof is refused, finer than the RFC code and stable, for logs and for callers that switch on it. */
export type DpopFailure =
  | 'missing_proof'
  | 'multiple_proofs'
  | 'malformed_proof'
  | 'wrong_type'
  | 'unsupported_alg'
  | 'invalid_key'
  | 'private_key'
  | 'bad_signature'
  | 'invalid_claims'
  | 'wrong_method'
  | 'wrong_url'
  | 'proof_too_old'
  | 'proof_from_future'
  | 'replayed_proof'
  /** The replay store holds as many unexpired jtis as it may: no new proof until some expire. */
  | 'replay_store_full'
  | 'wrong_ath'
  | 'nonce_required'

/**
 * A refused proof. `error` is the code of RFC 9449 (§5 at the token endpoint: 400 with it as the
 * OAuth `error`; §7.1 at an API: 401 with it in a `WWW-Authenticate: DPoP` challenge); `code` is finer.
 * The description is fixed English text and never holds the proof, the key or the token.
 */
export class DpopProofError extends Error {
  override name = 'DpopProofError'
  readonly error: DpopErrorCode

  constructor(
    readonly code: DpopFailure,
    readonly description: string,
  ) {
    super(description)
    this.error = code === 'nonce_required' ? 'use_dpop_nonce' : 'invalid_dpop_proof'
  }

  toJSON(): { error: DpopErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description }
  }
}

export const fail = (code: DpopFailure, description: string) => new DpopProofError(code, description)
export const malformed = () => fail('malformed_proof', 'The DPoP proof is not a well-formed JWT.')
