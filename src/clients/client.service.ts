import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Database } from '../db/database.js'
import { inRetriedTransaction } from '../db/transaction.js'
import { type AuditRecorder, NO_AUDIT, OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import { ProblemError } from '../errors.js'
import type { ClientNarrowing, GrantService } from '../grants/grant.service.js'
import type { Clock } from '../lib/clock.js'
import { ALL_SCOPES, isKnownScope, normalizeScopes } from '../lib/scopes.js'
import { isClientId, isClientIdUrl, newClientId } from '../lib/identifiers.js'
import { createClientOrigins } from './client-origins.js'
import {
  type Client,
  type ClientMetadata,
  disableClient,
  enableClient,
  findClientById,
  insertClient,
  listClients,
  lockClient,
  updateClient,
} from './client.repository.js'
import { displayMetadataFields, metadataOf } from './display-metadata.js'
import { redirectUriProblem } from './redirect-uri.js'
import {
  ClientRefused,
  createMetadataDocumentService,
  type MetadataDocumentDeps,
} from './metadata-document.service.js'

export type { Client, ClientMetadata, ClientNarrowing }
export { ClientRefused }

const clientFields = {
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
  redirect_uris: z
    .array(
      z.string().superRefine((uri, ctx) => {
        const problem = redirectUriProblem(uri)
        if (problem) ctx.addIssue({ code: 'custom', message: problem })
      }),
      'a list of redirect URIs',
    )
    .min(1, 'at least one redirect URI')
    .max(10, 'at most 10 redirect URIs')
    .refine((uris) => new Set(uris).size === uris.length, 'must not repeat a redirect URI'),
  scopes: z
    .array(
      z.string().refine(isKnownScope, { error: `unknown scope; known scopes: ${ALL_SCOPES.join(', ')}` }),
      'a list of scopes',
    )
    .min(1, 'at least one scope')
    .optional(),
}

export const newClientSchema = z.object({
  ...clientFields,
  ...displayMetadataFields,
  /** RFC 9449: refuse this client's token requests without a DPoP proof (its tokens are always bound). */
  require_dpop: z.boolean('true or false').optional(),
})

export type NewClient = z.output<typeof newClientSchema>

/**
 * PATCH /admin/clients/:id: only the fields given change (null removes a metadata field). Redirect
 * URIs and scopes are checked as at registration. A field this API does not know is refused, so a
 * misspelt one cannot be silently ignored.
 */
export const clientUpdateSchema = z
  .strictObject({
    name: clientFields.name.optional(),
    redirect_uris: clientFields.redirect_uris.optional(),
    scopes: clientFields.scopes,
    ...displayMetadataFields,
  })
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), 'name at least one field to change')

export type ClientUpdate = z.output<typeof clientUpdateSchema>

/** A client after an update, and what narrowing it did to live grants (nothing when it widened). */
export interface UpdatedClient {
  client: Client
  narrowing: ClientNarrowing | undefined
}

/** How many client_id URLs' trust-policy verdicts a process remembers (isAcceptedClientId). */
const ACCEPTED_URLS_MAX = 1_000

export function createClientService(
  db: Kysely<Database>,
  clock: Clock,
  grants: GrantService,
  audit: AuditRecorder = NO_AUDIT,
  documents?: Omit<MetadataDocumentDeps, 'db' | 'clock' | 'grants' | 'audit' | 'changed'>,
) {
  const origins = createClientOrigins(db)
  const metadataDocuments =
    documents &&
    createMetadataDocumentService({ ...documents, db, clock, grants, audit, changed: origins.invalidate })
  const acceptedUrls = new Map<string, boolean>()
  return {
    /**
     * The client an authorization request names, for the authorization endpoint: a registered or
     * dynamically registered client from the table, or a client_id URL's metadata document, read
     * again when its kept copy is stale. ClientRefused says why there is none to use.
     */
    async resolveForAuthorization(id: string, from?: RequestFacts): Promise<Client> {
      if (!id.startsWith('https://') || !metadataDocuments) {
        const client = await this.findActiveClient(id)
        if (!client) throw new ClientRefused('No enabled application has this client_id.')
        return client
      }
      const client = await metadataDocuments.resolve(id, from)
      if (client.disabledAt !== null) throw new ClientRefused('The operator has disabled this application.')
      return client
    },
    /** The operator's block list of client_id URLs (metadata documents); see MetadataDocumentService. */
    blockClientId(clientId: string, reason: string | null, from?: RequestFacts) {
      if (!metadataDocuments) throw new ProblemError(404, 'Metadata documents are not served here.')
      return metadataDocuments.block(clientId, reason, from)
    },
    unblockClientId(clientId: string, from?: RequestFacts) {
      if (!metadataDocuments) throw new ProblemError(404, 'Metadata documents are not served here.')
      return metadataDocuments.unblock(clientId, from)
    },
    listBlockedClientIds: () => metadataDocuments?.listBlocked() ?? Promise.resolve([]),
    async createClient(input: NewClient, from?: RequestFacts): Promise<Client> {
      const client = await db.transaction().execute(async (trx) => {
        const created = await insertClient(trx, {
          id: newClientId(),
          name: input.name,
          redirectUris: input.redirect_uris,
          scopes: normalizeScopes(input.scopes ?? ALL_SCOPES),
          requireDpop: input.require_dpop ?? false,
          metadata: metadataOf(input),
        })
        await audit.record(trx, {
          type: 'client.created',
          actor: OPERATOR,
          target: { kind: 'client', id: created.id },
          clientId: created.id,
          details: { name: created.name, redirect_uris: created.redirectUris, scopes: created.scopes },
          from,
        })
        return created
      })
      origins.invalidate()
      return client
    },
    /**
     * Changes what is given, in one transaction with the client's row locked. Removing a scope or a
     * redirect URI applies to the next request (authorize reads the client from the database; the
     * CORS origins here at once, on other instances within their snapshot age); removing a scope also
     * narrows or revokes what was granted with it (GrantService.narrowForClient), announced on the
     * revocation feed. Unknown id → 404.
     */
    async updateClient(id: string, patch: ClientUpdate, from?: RequestFacts): Promise<UpdatedClient> {
      if (!isClientId(id)) throw new ProblemError(404, 'No client with this id.')
      // Deadlocks with a concurrent refresh or consent roll the whole transaction back: run it again.
      const updated = await inRetriedTransaction(db, async (trx) => {
        const current = await lockClient(trx, id)
        if (!current) throw new ProblemError(404, 'No client with this id.')
        const scopes = patch.scopes ? normalizeScopes(patch.scopes) : current.scopes
        const redirectUris = patch.redirect_uris ?? current.redirectUris
        const client = await updateClient(trx, id, {
          name: patch.name,
          redirectUris: patch.redirect_uris,
          scopes: patch.scopes ? scopes : undefined,
          metadata: metadataOf(patch),
        })
        const scopeRemoved = current.scopes.some((s) => !scopes.includes(s))
        const removedUris = current.redirectUris.filter((u) => !redirectUris.includes(u))
        const narrowing =
          scopeRemoved || removedUris.length > 0
            ? await grants.narrowForClient(id, scopes, removedUris, trx, from)
            : undefined
        await audit.record(trx, {
          type: 'client.updated',
          actor: OPERATOR,
          target: { kind: 'client', id },
          clientId: id,
          details: {
            fields: Object.keys(patch).filter((k) => patch[k as keyof ClientUpdate] !== undefined),
            ...(patch.scopes ? { scopes, previous_scopes: current.scopes } : {}),
            ...(patch.redirect_uris
              ? { redirect_uris: redirectUris, removed_redirect_uris: removedUris }
              : {}),
            ...(narrowing
              ? {
                  grants_revoked: narrowing.grantsRevoked.length,
                  grants_narrowed: narrowing.grantsNarrowed,
                  refresh_families_revoked: narrowing.familiesRevoked,
                }
              : {}),
          },
          from,
        })
        return { client, narrowing }
      })
      origins.invalidate()
      return updated
    },
    /**
     * Re-enables a disabled client: it can authorize again. What disabling revoked stays revoked (its
     * grants and refresh families keep revoked_at; users consent again). Unknown id → 404.
     */
    async enableClient(id: string, from?: RequestFacts): Promise<Client> {
      if (!isClientId(id)) throw new ProblemError(404, 'No client with this id.')
      const client = await db.transaction().execute(async (trx) => {
        const current = await lockClient(trx, id)
        if (!current) throw new ProblemError(404, 'No client with this id.')
        if (current.disabledAt === null) return current // already enabled: nothing changes, nothing recorded
        const enabled = await enableClient(trx, id)
        await audit.record(trx, {
          type: 'client.enabled',
          actor: OPERATOR,
          target: { kind: 'client', id },
          clientId: id,
          from,
        })
        return enabled ?? current
      })
      origins.invalidate()
      return client
    },
    /**
     * Whether the operator's policy still accepts this client_id: always for an id the service issued;
     * for a client_id URL, while metadata documents are on and its host is allowed and not denied
     * (CLIENT_METADATA_*). No database read: the token endpoint and introspection ask it on every
     * request, so that turning the door off (or denying a host) stops what such clients already hold.
     * Nothing is revoked: turning it on again lets the same grants work (the block list revokes).
     */
    isAcceptedClientId(id: string): boolean {
      if (!id.startsWith('https://')) return true
      // Asked on every authorize and token request of a URL client: the verdict (URL checks and the
      // trust policy, configuration fixed for the process) is remembered, a bounded number of them.
      let accepted = acceptedUrls.get(id)
      if (accepted === undefined) {
        accepted = !isClientIdUrl(id) || (metadataDocuments?.isAcceptable(id) ?? false)
        if (acceptedUrls.size >= ACCEPTED_URLS_MAX) acceptedUrls.clear()
        acceptedUrls.set(id, accepted)
      }
      return accepted
    },
    /** A client came or went outside this service (a dynamic registration): CORS reads the table again. */
    invalidateOrigins: () => origins.invalidate(),
    /** CORS (web/cors.ts): the origins of enabled clients' redirect URIs, from memory. */
    isRegisteredOrigin: origins.isRegisteredOrigin,
    isOriginOf: origins.isOriginOf,
    listClients: () => listClients(db),
    async getClient(id: string): Promise<Client> {
      const client = await findClientById(db, id)
      if (!client) throw new ProblemError(404, 'No client with this id.')
      return client
    },
    /**
     * A client that exists and is not disabled, or undefined. An id of another shape is no client of
     * ours and never reaches a query (a NUL byte would make PostgreSQL fail the statement: a 500).
     */
    async findActiveClient(id: string): Promise<Client | undefined> {
      if (!isClientId(id)) return undefined
      // A client_id URL stops working everywhere once the operator's policy no longer accepts it.
      if (!this.isAcceptedClientId(id)) return undefined
      const client = await findClientById(db, id)
      return client && client.disabledAt === null ? client : undefined
    },
    /**
     * Disables a client and revokes all its grants, in one transaction, run again from its start when
     * the revocation loses a deadlock to concurrent code exchanges (see revokeGrantsWhere).
     */
    async disableClient(id: string, from?: RequestFacts): Promise<Client> {
      const client = await inRetriedTransaction(db, async (trx) => {
        const client = await disableClient(trx, id, clock.now())
        if (!client) throw new ProblemError(404, 'No client with this id.')
        const revoked = await grants.revokeAllForClient(id, trx, from)
        await audit.record(trx, {
          type: 'client.disabled',
          actor: OPERATOR,
          target: { kind: 'client', id },
          clientId: id,
          details: { grants_revoked: revoked },
          from,
        })
        return client
      })
      origins.invalidate()
      return client
    },
  }
}

export type ClientService = ReturnType<typeof createClientService>
