import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { type AuditRecorder, NO_AUDIT, type RequestFacts } from '../audit/audit.service.js'
import type { Database } from '../db/database.js'
import type { GrantService } from '../grants/grant.service.js'
import type { Clock } from '../lib/clock.js'
import { blockClientId, unblockClientId } from './client-id-block-list.js'
import { ClientRefused } from './client-refused.js'
import { findBlockedClientId, listBlockedClientIds } from './client-registration.repository.js'
import { type Client, findClientById } from './client.repository.js'
import type { DocumentFetchOptions } from './document-fetch.js'
import { type RefreshConfig, refreshDocument } from './document-refresh.js'
import { createFetchSlots } from './fetch-slots.js'
import { type TrustPolicyConfig, trustPolicyProblem } from './trust-policy.js'

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client_id that is
 * an https URL names the JSON document describing the application. The document is fetched safely
 * (document-fetch.ts), checked like a registration (document-check.ts), and kept as a row of the
 * clients table (kind 'metadata_document', document-refresh.ts), so that grants, codes, tokens,
 * introspection, the connected-apps page, the audit trail and the event feed treat it as any client.
 * The row is read again from its URL only when its copy is stale, on the authorization endpoint
 * alone: the token endpoint reads the row, as for a registered client. The operator's trust policy
 * is trust-policy.ts, the block list client-id-block-list.ts; this factory wires them together and
 * holds the process's memory (one fetch per client_id at a time, when to ask a failing publisher).
 */

export type MetadataDocumentConfig = TrustPolicyConfig & RefreshConfig

export interface MetadataDocumentDeps {
  db: Kysely<Database>
  clock: Clock
  config: MetadataDocumentConfig
  grants: GrantService
  audit?: AuditRecorder
  logger?: Pick<Logger, 'warn'>
  /** The test-only CA (PEM) of CLIENT_METADATA_TEST_CA, already read. */
  testCa?: string | undefined
  /** Tests: how host names resolve. */
  resolve?: DocumentFetchOptions['resolve']
  /** A client's redirect URIs changed or it was blocked: the CORS origins are read again. */
  changed?: () => void
}

export function createMetadataDocumentService(deps: MetadataDocumentDeps) {
  const { db, clock, config } = deps
  const audit = deps.audit ?? NO_AUDIT
  /** One fetch per client_id at a time in this process: a burst of authorizations shares it. */
  const inFlight = new Map<string, Promise<Client>>()
  /** While a kept copy serves because its publisher failed: not before this time again (ms). */
  const retryAfter = new Map<string, number>()
  const slots = createFetchSlots(config.clientMetadataFetchConcurrency)
  const refreshDeps = { ...deps, audit, retryAfter, slots }
  const blockListDeps = { db, clock, grants: deps.grants, audit }

  async function refresh(clientId: string, kept: Client | undefined, from?: RequestFacts): Promise<Client> {
    const { client, redirectUrisChanged } = await refreshDocument(refreshDeps, clientId, kept, from)
    if (redirectUrisChanged) deps.changed?.()
    return client
  }

  return {
    /**
     * The client a client_id URL names, for the authorization endpoint: the kept row while fresh,
     * else the document read again. ClientRefused (with why) when the policy, the block list, the
     * fetch or the document says no.
     */
    async resolve(clientId: string, from?: RequestFacts): Promise<Client> {
      const problem = trustPolicyProblem(config, clientId)
      if (problem) throw new ClientRefused(problem)
      if (await findBlockedClientId(db, clientId))
        throw new ClientRefused('The operator has blocked this application.')
      const kept = await findClientById(db, clientId)
      if (kept?.documentExpiresAt && clock.now() < kept.documentExpiresAt) return kept
      // A publisher that just failed is not asked again at every request while its kept copy serves.
      const notBefore = retryAfter.get(clientId)
      if (kept && notBefore !== undefined && clock.now().getTime() < notBefore) return kept
      const running = inFlight.get(clientId)
      if (running) return running
      const promise = refresh(clientId, kept, from).finally(() => inFlight.delete(clientId))
      inFlight.set(clientId, promise)
      return promise
    },

    /** Whether the token endpoint and others may use a kept client_id URL row (policy and block list). */
    isAcceptable(clientId: string): boolean {
      return trustPolicyProblem(config, clientId) === null
    },

    /**
     * Blocks a client_id URL, seen or not: its row (if any) is disabled and its grants revoked, and no
     * document read later unblocks it. 201 when added, 200 when it was blocked already.
     */
    async block(clientId: string, reason: string | null, from?: RequestFacts): Promise<{ created: boolean }> {
      const result = await blockClientId(blockListDeps, clientId, reason, from)
      deps.changed?.()
      return result
    },

    /** Takes a client_id URL off the block list; its row stays disabled until the operator enables it. */
    unblock: (clientId: string, from?: RequestFacts): Promise<void> =>
      unblockClientId(blockListDeps, clientId, from),

    listBlocked: () => listBlockedClientIds(db),
  }
}

export type MetadataDocumentService = ReturnType<typeof createMetadataDocumentService>
