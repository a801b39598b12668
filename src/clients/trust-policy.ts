import type { Config } from '../config.js'
import { clientIdUrlProblem } from '../lib/identifiers.js'
import { hostMatches } from './host-policy.js'

/** The operator's settings that decide whether a client_id URL may be used at all. */
export type TrustPolicyConfig = Pick<
  Config,
  'clientMetadataDocuments' | 'clientMetadataAllowedHosts' | 'clientMetadataDeniedHosts'
>

/**
 * Why the operator's policy refuses a client_id URL (metadata documents off, a malformed URL, a
 * denied host, a host not on the allow list), or null when it is accepted. No query: the token
 * endpoint and introspection ask it on every request.
 */
export function trustPolicyProblem(config: TrustPolicyConfig, clientId: string): string | null {
  if (!config.clientMetadataDocuments) return 'This server does not accept applications identified by a URL.'
  const problem = clientIdUrlProblem(clientId)
  if (problem) return `The client_id URL ${problem}.`
  const host = new URL(clientId).host.toLowerCase()
  if (config.clientMetadataDeniedHosts.some((pattern) => hostMatches(pattern, host)))
    return `Applications from ${host} are not accepted here.`
  if (
    config.clientMetadataAllowedHosts.length > 0 &&
    !config.clientMetadataAllowedHosts.some((pattern) => hostMatches(pattern, host))
  )
    return `Applications from ${host} are not accepted here.`
  return null
}
