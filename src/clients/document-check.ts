import { ClientMetadataProblem, readStatedMetadata, type StatedClientMetadata } from './client-metadata.js'
import { ClientRefused } from './client-refused.js'
import { type ScopePolicyConfig, selfRegisteredScopes } from './scope-policy.js'

/**
 * Checking a fetched metadata document: it names itself (its client_id is exactly the URL it came
 * from), reads as a registration would (client-metadata.ts), and asks for at least one scope the
 * operator gives such applications; and how long it may be kept.
 */

export interface CheckedDocument {
  stated: StatedClientMetadata
  /** The most it may be granted: what the operator allows such applications (scope-policy.ts). */
  scopes: string[]
  /** What it states as its `scope`, within those: its default; null when it states none of ours. */
  defaultScopes: string[] | null
}

/** The document's metadata, or ClientRefused saying what is wrong with it. */
export function checkDocument(clientId: string, body: unknown, policy: ScopePolicyConfig): CheckedDocument {
  let stated
  try {
    const document = body as Record<string, unknown> | null
    if (typeof document !== 'object' || document === null || document.client_id !== clientId)
      throw new ClientMetadataProblem('its client_id is not exactly the URL it was fetched from')
    stated = readStatedMetadata(document)
  } catch (err) {
    if (err instanceof ClientMetadataProblem)
      throw new ClientRefused(`The application's metadata document is not acceptable: ${err.message}.`)
    throw err
  }
  const scopes = selfRegisteredScopes(policy, 'metadata_document', stated.scopes)
  if (!scopes)
    throw new ClientRefused(
      'The application asks only for scopes this server does not give such applications.',
    )
  return { stated, ...scopes }
}

/** Seconds to keep a document: its max-age (none: the minimum), within the operator's bounds. */
export function freshnessSeconds(cacheControl: string | undefined, min: number, max: number): number {
  const directives = (cacheControl ?? '').toLowerCase()
  const maxAge = /(?:^|[,\s])max-age\s*=\s*"?(\d{1,10})"?/.exec(directives)
  const stated = /no-store|no-cache/.test(directives) || !maxAge ? 0 : Number(maxAge[1])
  return Math.min(max, Math.max(min, stated))
}
