import type { Logger } from 'pino'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { type AuditRecorder, NO_AUDIT, type RequestFacts } from '../audit/audit.service.js'
import { ProblemError } from '../errors.js'
import type { ClientNarrowing, GrantService } from '../grants/grant.service.js'
import type { Clock } from '../lib/clock.js'
import {
  type ClientAdminDeps,
  createClient,
  disableClient,
  enableClient,
  getClient,
  setStanding,
  updateClient,
  type UpdatedClient,
} from './client-admin.js'
import { type ClientUpdate, clientUpdateSchema, type NewClient, newClientSchema } from './client-input.js'
import {
  type ClientLookupDeps,
  findActiveClient,
  isAcceptedClientId,
  resolveForAuthorization,
} from './client-lookup.js'
import { createClientOrigins } from './client-origins.js'
import { createReservedNames } from './reserved-names.js'
import { type AppDisplay, appDisplay, type DisplayFacts } from './standing.js'
import {
  type Client,
  type ClientMetadata,
  defaultScopesOf,
  hasClients,
  listClients,
  type StandingOverride,
} from './client.repository.js'
import { ClientRefused, ClientUnavailable } from './client-refused.js'
import { createMetadataDocumentService, type MetadataDocumentDeps } from './metadata-document.service.js'
import { requestableScopes } from './scope-policy.js'

export type { AppDisplay, Client, ClientMetadata, ClientNarrowing, ClientUpdate, NewClient, UpdatedClient }
export {
  ClientRefused,
  ClientUnavailable,
  clientUpdateSchema,
  defaultScopesOf,
  newClientSchema,
  requestableScopes,
}

/**
 * Clients: wiring only. Each concern is a module of plain functions over the dependencies built
 * here: client-lookup.ts (the client a request names, and the trust policy's verdicts),
 * client-admin.ts (the operator's create, update, enable, disable), client-origins.ts (CORS), and
 * metadata-document.service.ts (client_id URLs and the block list).
 */
export function createClientService(
  db: Kysely<Database>,
  clock: Clock,
  grants: GrantService,
  audit: AuditRecorder = NO_AUDIT,
  /** What metadata documents need; its logger also logs each client the operator creates. */
  documents?: Omit<MetadataDocumentDeps, 'db' | 'clock' | 'grants' | 'audit' | 'changed' | 'logger'> & {
    logger?: Pick<Logger, 'warn' | 'info'>
  },
  /** RESERVED_CLIENT_NAMES: brands no self-declared name may borrow (client-names.ts). */
  reservedClientNames: readonly string[] = [],
) {
  const origins = createClientOrigins(db)
  const reservedNames = createReservedNames(db, reservedClientNames)
  const metadataDocuments =
    documents &&
    createMetadataDocumentService({ ...documents, db, clock, grants, audit, changed: origins.invalidate })
  const lookup: ClientLookupDeps = { db, metadataDocuments, acceptedUrls: new Map() }
  const changed = () => {
    origins.invalidate()
    reservedNames.invalidate()
  }
  const admin: ClientAdminDeps = { db, clock, grants, audit, changed, logger: documents?.logger }
  /** The display of each app; a self-declared name that borrows a reserved one shows as its host. */
  const displaysOf = async (clients: readonly DisplayFacts[]): Promise<AppDisplay[]> => {
    const reserved = await reservedNames.current()
    return clients.map((client) =>
      appDisplay(client, client.kind !== 'registered' && reserved.borrowedFrom(client.name) !== undefined),
    )
  }
  const documentsServed = () => {
    if (!metadataDocuments) throw new ProblemError(404, 'Metadata documents are not served here.')
    return metadataDocuments
  }
  return {
    /** The client an authorization request names (client-lookup.ts); ClientRefused says why none. */
    resolveForAuthorization: (id: string, from?: RequestFacts): Promise<Client> =>
      resolveForAuthorization(lookup, id, from),
    /** The operator's block list of client_id URLs (metadata documents); see MetadataDocumentService. */
    blockClientId: (clientId: string, reason: string | null, from?: RequestFacts) =>
      documentsServed().block(clientId, reason, from),
    unblockClientId: (clientId: string, from?: RequestFacts) => documentsServed().unblock(clientId, from),
    listBlockedClientIds: () => metadataDocuments?.listBlocked() ?? Promise.resolve([]),
    createClient: (input: NewClient, from?: RequestFacts): Promise<Client> =>
      createClient(admin, input, from),
    /** Changes what is given; a removed scope or redirect URI narrows live grants (client-admin.ts). */
    updateClient: (id: string, patch: ClientUpdate, from?: RequestFacts): Promise<UpdatedClient> =>
      updateClient(admin, id, patch, from),
    /** Re-enables a disabled client; what disabling revoked stays revoked. */
    enableClient: (id: string, from?: RequestFacts): Promise<Client> => enableClient(admin, id, from),
    /** Whether the operator's policy still accepts this client_id, without a query (client-lookup.ts). */
    isAcceptedClientId: (id: string): boolean => isAcceptedClientId(lookup, id),
    /** A client came or went outside this service (a dynamic registration): CORS reads the table again. */
    invalidateOrigins: () => origins.invalidate(),
    /** CORS (web/cors.ts): the origins of enabled clients' redirect URIs, from memory. */
    isRegisteredOrigin: origins.isRegisteredOrigin,
    isOriginOf: origins.isOriginOf,
    listClients: () => listClients(db),
    /** Whether any client is registered (without reading them). */
    hasClients: () => hasClients(db),
    /** How an app is named on every surface (standing.ts), the borrowed-name rule applied. */
    displayOf: async (client: DisplayFacts): Promise<AppDisplay> => (await displaysOf([client]))[0]!,
    displaysOf,
    /** The names self-declared ones may not borrow (dynamic registration refuses them). */
    reservedNames: () => reservedNames.current(),
    /** The operator verifies an app, takes its standing away, or (null) leaves it to the kind. */
    setStanding: (id: string, override: StandingOverride | null, from?: RequestFacts): Promise<Client> =>
      setStanding(admin, id, override, from),
    getClient: (id: string): Promise<Client> => getClient(admin, id),
    /** A client that exists and is not disabled, or undefined (client-lookup.ts). */
    findActiveClient: (id: string): Promise<Client | undefined> => findActiveClient(lookup, id),
    /** Disables a client and revokes all its grants, in one transaction run again on a deadlock. */
    disableClient: (id: string, from?: RequestFacts): Promise<Client> => disableClient(admin, id, from),
  }
}

export type ClientService = ReturnType<typeof createClientService>
