import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RequestFacts } from '../audit/audit.service.js'
import {
  CLIENT_ID_URL_NOT_HTTPS,
  isClientId,
  isClientIdUrl,
  isNonHttpsClientIdUrl,
} from '../lib/identifiers.js'
import { type Client, findClientById } from './client.repository.js'
import { ClientRefused } from './client-refused.js'
import type { MetadataDocumentService } from './metadata-document.service.js'

/** How many client_id URLs' trust-policy verdicts a process remembers (isAcceptedClientId). */
const ACCEPTED_URLS_MAX = 1_000

/** What finding the client of a request needs; the client service builds it once. */
export interface ClientLookupDeps {
  db: Kysely<Database>
  /** Client ID Metadata Documents, when they are served here. */
  metadataDocuments: MetadataDocumentService | undefined
  /** The trust policy's verdict for each client_id URL asked, a bounded number of them. */
  acceptedUrls: Map<string, boolean>
}

/**
 * Whether the operator's policy still accepts this client_id: always for an id the service issued;
 * for a client_id URL, while metadata documents are on and its host is allowed and not denied
 * (CLIENT_METADATA_*). No database read: the token endpoint and introspection ask it on every
 * request, so that turning the door off (or denying a host) stops what such clients already hold.
 * Nothing is revoked: turning it on again lets the same grants work (the block list revokes).
 */
export function isAcceptedClientId(deps: ClientLookupDeps, id: string): boolean {
  if (!id.startsWith('https://')) return true
  // Asked on every authorize and token request of a URL client: the verdict (URL checks and the
  // trust policy, configuration fixed for the process) is remembered, a bounded number of them.
  let accepted = deps.acceptedUrls.get(id)
  if (accepted === undefined) {
    accepted = !isClientIdUrl(id) || (deps.metadataDocuments?.isAcceptable(id) ?? false)
    if (deps.acceptedUrls.size >= ACCEPTED_URLS_MAX) deps.acceptedUrls.clear()
    deps.acceptedUrls.set(id, accepted)
  }
  return accepted
}

/**
 * A client that exists and is not disabled, or undefined. An id of another shape is no client of
 * ours and never reaches a query (a NUL byte would make PostgreSQL fail the statement: a 500).
 */
export async function findActiveClient(deps: ClientLookupDeps, id: string): Promise<Client | undefined> {
  if (!isClientId(id)) return undefined
  // A client_id URL stops working everywhere once the operator's policy no longer accepts it.
  if (!isAcceptedClientId(deps, id)) return undefined
  const client = await findClientById(deps.db, id)
  return client && client.disabledAt === null ? client : undefined
}

/**
 * The client an authorization request names, for the authorization endpoint: a registered or
 * dynamically registered client from the table, or a client_id URL's metadata document, read again
 * when its kept copy is stale. ClientRefused says why there is none to use.
 */
export async function resolveForAuthorization(
  deps: ClientLookupDeps,
  id: string,
  from: RequestFacts | undefined,
): Promise<Client> {
  if (isNonHttpsClientIdUrl(id)) throw new ClientRefused(CLIENT_ID_URL_NOT_HTTPS)
  if (!id.startsWith('https://') || !deps.metadataDocuments) {
    const client = await findActiveClient(deps, id)
    if (!client) throw new ClientRefused('No enabled application has this client_id.')
    return client
  }
  const client = await deps.metadataDocuments.resolve(id, from)
  if (client.disabledAt !== null) throw new ClientRefused('The operator has disabled this application.')
  return client
}
