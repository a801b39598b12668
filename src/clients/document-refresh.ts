import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { AuditRecorder, RequestFacts } from '../audit/audit.service.js'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { inRetriedTransaction } from '../db/transaction.js'
import type { GrantService } from '../grants/grant.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { findBlockedClientId, upsertDocumentClient } from './client-registration.repository.js'
import type { Client } from './client.repository.js'
import { ClientRefused, ClientUnavailable } from './client-refused.js'
import { checkDocument, freshnessSeconds } from './document-check.js'
import {
  DocumentFetchBusy,
  DocumentFetchError,
  type DocumentFetchOptions,
  fetchClientDocument,
} from './document-fetch.js'
import type { FetchSlots } from './fetch-slots.js'

/**
 * Reading a client_id URL's metadata document again and keeping it as the client's row: fetched
 * (document-fetch.ts), checked (document-check.ts), then written with the block list read again
 * under the row's lock; what changed since the kept copy is audited and narrows or revokes grants.
 * A publisher that fails leaves the kept copy serving a bounded while.
 */

/** How long a kept copy serves without asking its failing publisher again. */
export const RETRY_AFTER_FAILURE_MS = 60_000

export type RefreshConfig = Pick<
  Config,
  | 'clientMetadataScopes'
  | 'dynamicRegistrationScopes'
  | 'clientMetadataDefaultScopes'
  | 'dynamicRegistrationDefaultScopes'
  | 'clientMetadataCacheMin'
  | 'clientMetadataCacheMax'
  | 'clientMetadataStaleMax'
  | 'clientMetadataFetchTimeoutMs'
  | 'clientMetadataMaxBytes'
  | 'clientMetadataFetchConcurrency'
>

export interface RefreshDeps {
  db: Kysely<Database>
  clock: Clock
  config: RefreshConfig
  grants: GrantService
  audit: AuditRecorder
  logger?: Pick<Logger, 'warn'> | undefined
  testCa?: string | undefined
  resolve?: DocumentFetchOptions['resolve'] | undefined
  /** The process's cap on fetches at once (CLIENT_METADATA_FETCH_CONCURRENCY). */
  slots: FetchSlots
  /** While a kept copy serves because its publisher failed: not before this time again (ms). */
  retryAfter: Map<string, number>
}

/** The client row after reading its document again (or the kept copy, while its publisher fails). */
export async function refreshDocument(
  deps: RefreshDeps,
  clientId: string,
  kept: Client | undefined,
  from?: RequestFacts,
): Promise<{ client: Client; redirectUrisChanged: boolean }> {
  const { config, retryAfter } = deps
  const now = deps.clock.now()
  let fetched
  try {
    fetched = await fetchClientDocument(clientId, {
      timeoutMs: config.clientMetadataFetchTimeoutMs,
      maxBytes: config.clientMetadataMaxBytes,
      testCa: deps.testCa,
      resolve: deps.resolve,
      slots: deps.slots,
    })
  } catch (err) {
    if (!(err instanceof DocumentFetchError)) throw err
    // A kept copy serves a little longer while its publisher is unreachable (bounded).
    const servesKept =
      kept?.documentExpiresAt && now < addSeconds(kept.documentExpiresAt, config.clientMetadataStaleMax)
    // Too many fetches at once: nothing is known against the document, so no refusal.
    if (err instanceof DocumentFetchBusy) {
      if (servesKept) return { client: kept, redirectUrisChanged: false }
      throw new ClientUnavailable(`The application's metadata document cannot be read now: ${err.message}.`)
    }
    if (servesKept) {
      if (retryAfter.size >= 10_000) retryAfter.clear()
      retryAfter.set(clientId, now.getTime() + RETRY_AFTER_FAILURE_MS)
      deps.logger?.warn(
        { clientId, reason: err.message },
        'client metadata document unreachable; serving the kept copy',
      )
      return { client: kept, redirectUrisChanged: false }
    }
    throw new ClientRefused(`The application's metadata document could not be used: ${err.message}.`)
  }
  const { stated, scopes, defaultScopes } = checkDocument(clientId, fetched.body, config)
  retryAfter.delete(clientId)
  const seconds = freshnessSeconds(
    fetched.cacheControl,
    config.clientMetadataCacheMin,
    config.clientMetadataCacheMax,
  )
  const host = new URL(clientId).host
  const { before, client } = await inRetriedTransaction(deps.db, async (trx) => {
    // The block list is read again under the row's lock: a block committed meanwhile wins.
    if (await findBlockedClientId(trx, clientId))
      throw new ClientRefused('The operator has blocked this application.')
    const { before, client } = await upsertDocumentClient(trx, {
      id: clientId,
      name: stated.name ?? host,
      redirectUris: stated.redirectUris,
      scopes,
      defaultScopes,
      grantTypes: stated.grantTypes,
      metadata: {
        homepageUrl: stated.homepageUrl,
        privacyPolicyUrl: stated.privacyPolicyUrl,
        termsUrl: stated.termsUrl,
        description: null,
      },
      requirePar: stated.requirePar,
      fetchedAt: now,
      expiresAt: addSeconds(now, seconds),
    })
    if (!client) throw new ClientRefused('No application has this client_id.')
    await recordDocumentChange(deps, trx, before, client, from)
    return { before, client }
  })
  return { client, redirectUrisChanged: !before || !sameList(before.redirectUris, client.redirectUris) }
}

/**
 * First sight, and a document that changed after users consented: a new redirect URI revokes every
 * live grant (users consent again, seeing where codes now go); a removed URI or scope narrows the
 * grants as an operator's change does.
 */
async function recordDocumentChange(
  deps: Pick<RefreshDeps, 'grants' | 'audit'>,
  trx: Kysely<Database>,
  before: Client | undefined,
  client: Client,
  from?: RequestFacts,
): Promise<void> {
  const actor = { kind: 'client' as const, id: client.id }
  const target = { kind: 'client' as const, id: client.id }
  if (!before) {
    await deps.audit.record(trx, {
      type: 'client.first_seen',
      actor,
      target,
      clientId: client.id,
      details: {
        name: client.name,
        redirect_uris: client.redirectUris,
        scopes: client.scopes,
        standing: client.standing,
      },
      from,
    })
    return
  }
  const added = client.redirectUris.filter((u) => !before.redirectUris.includes(u))
  const removed = before.redirectUris.filter((u) => !client.redirectUris.includes(u))
  const scopeRemoved = before.scopes.some((s) => !client.scopes.includes(s))
  if (added.length === 0 && removed.length === 0 && !scopeRemoved && before.name === client.name) return
  let grantsRevoked = 0
  if (added.length > 0)
    grantsRevoked = await deps.grants.revokeAllForClient(client.id, trx, from, {
      reason: 'client_document_changed',
      actor,
    })
  else if (removed.length > 0 || scopeRemoved)
    grantsRevoked = (await deps.grants.narrowForClient(client.id, client.scopes, removed, trx, from))
      .grantsRevoked.length
  await deps.audit.record(trx, {
    type: 'client.document_changed',
    actor,
    target,
    clientId: client.id,
    details: {
      name: client.name,
      previous_name: before.name,
      redirect_uris: client.redirectUris,
      previous_redirect_uris: before.redirectUris,
      scopes: client.scopes,
      standing: client.standing,
      grants_revoked: grantsRevoked,
    },
    from,
  })
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i])
}
