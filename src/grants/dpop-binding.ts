import { invalidGrant, OAuthError } from '../errors.js'

/**
 * RFC 9449 §5 for a refresh token: the one home of the rule that a family bound to a DPoP key is
 * refreshed only with a proof made with that key, and that a client which requires DPoP
 * (clients.require_dpop) refreshes only with a proof. The rotation statement carries the same two
 * lines in SQL; the slow path asks this function first, before any other refusal, so that a bound
 * token presented without its key never counts as a reuse: it revokes nothing (someone who holds the
 * token but not the key can do nothing with it, and presenting it must not end the user's session).
 */
export type DpopBindingRefusal = 'dpop_required' | 'dpop_key_mismatch'

export function dpopBindingRefusal(
  family: { dpopJkt: string | null; clientRequiresDpop: boolean },
  presentedJkt: string | null,
): DpopBindingRefusal | undefined {
  if (presentedJkt === null && family.clientRequiresDpop) return 'dpop_required' // $jkt is not null or not c.require_dpop
  if (family.dpopJkt !== null && family.dpopJkt !== presentedJkt) return 'dpop_key_mismatch' // f.dpop_jkt is null or f.dpop_jkt = $jkt
  return undefined
}

/** A token request without a proof where DPoP is required (the deployment's or the client's rule). */
export const dpopRequired = () =>
  new OAuthError('invalid_dpop_proof', 'A DPoP proof is required: send a DPoP header (RFC 9449).')

export const DPOP_BINDING_REFUSALS: Record<DpopBindingRefusal, () => OAuthError> = {
  dpop_required: dpopRequired,
  dpop_key_mismatch: () =>
    invalidGrant('The refresh token is bound to a DPoP key: send a proof made with that key.'),
}
