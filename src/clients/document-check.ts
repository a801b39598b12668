import { ALL_SCOPES } from '../lib/scopes.js'
import { ClientMetadataProblem, readStatedMetadata, type StatedClientMetadata } from './client-metadata.js'
import { ClientRefused } from './client-refused.js'

/**
 * Checking a fetched metadata document: it names itself (its client_id is exactly the URL it came
 * from), reads as a registration would (client-metadata.ts), and asks for at least one scope the
 * operator gives such applications; and how long it may be kept.
 */

export interface CheckedDocument {
  stated: StatedClientMetadata
  /** What it asks for within what the operator allows (CLIENT_METADATA_SCOPES; empty: all). */
  scopes: string[]
}

/** The document's metadata, or ClientRefused saying what is wrong with it. */
export function checkDocument(
  clientId: string,
  body: unknown,
  allowedScopes: readonly string[],
): CheckedDocument {
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
  const allowed: readonly string[] = allowedScopes.length > 0 ? allowedScopes : ALL_SCOPES
  const scopes = (stated.scopes ?? ALL_SCOPES).filter((s) => allowed.includes(s))
  if (scopes.length === 0)
    throw new ClientRefused(
      'The application asks only for scopes this server does not give such applications.',
    )
  return { stated, scopes }
}

/** Seconds to keep a document: its max-age (none: the minimum), within the operator's bounds. */
export function freshnessSeconds(cacheControl: string | undefined, min: number, max: number): number {
  const directives = (cacheControl ?? '').toLowerCase()
  const maxAge = /(?:^|[,\s])max-age\s*=\s*"?(\d{1,10})"?/.exec(directives)
  const stated = /no-store|no-cache/.test(directives) || !maxAge ? 0 : Number(maxAge[1])
  return Math.min(max, Math.max(min, stated))
}
