import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { type AuditRecorder, NO_AUDIT, OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { inRetriedTransaction } from '../db/transaction.js'
import { ProblemError } from '../errors.js'
import type { GrantService } from '../grants/grant.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { clientIdUrlProblem } from '../lib/identifiers.js'
import { ALL_SCOPES } from '../lib/scopes.js'
import { ClientMetadataProblem, readStatedMetadata } from './client-metadata.js'
import {
  deleteBlockedClientId,
  findBlockedClientId,
  insertBlockedClientId,
  listBlockedClientIds,
  upsertDocumentClient,
} from './client-registration.repository.js'
import { type Client, findClientById } from './client.repository.js'
import { DocumentFetchError, type DocumentFetchOptions, fetchClientDocument } from './document-fetch.js'
import { hostMatches } from './host-policy.js'

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client_id that is
 * an https URL names the JSON document describing the application. The document is fetched safely
 * (document-fetch.ts), checked like a registration (client-metadata.ts), and kept as a row of the
 * clients table (kind 'metadata_document'), so that grants, codes, tokens, introspection, the
 * connected-apps page, the audit trail and the event feed treat it as any client. The row is read
 * again from its URL only when its copy is stale, on the authorization endpoint alone: the token
 * endpoint reads the row, as for a registered client.
 */

/** Why a client_id URL names no usable client: shown on the error page, never a secret. */
/** How long a kept copy serves without asking its failing publisher again. */
const RETRY_AFTER_FAILURE_MS = 60_000

export class ClientRefused extends Error {
  override name = 'ClientRefused'
}

export type MetadataDocumentConfig = Pick<
  Config,
  | 'clientMetadataDocuments'
  | 'clientMetadataAllowedHosts'
  | 'clientMetadataDeniedHosts'
  | 'clientMetadataScopes'
  | 'clientMetadataCacheMin'
  | 'clientMetadataCacheMax'
  | 'clientMetadataStaleMax'
  | 'clientMetadataFetchTimeoutMs'
  | 'clientMetadataMaxBytes'
>

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

/** Seconds to keep a document: its max-age (none: the minimum), within the operator's bounds. */
export function freshnessSeconds(cacheControl: string | undefined, min: number, max: number): number {
  const directives = (cacheControl ?? '').toLowerCase()
  const maxAge = /(?:^|[,\s])max-age\s*=\s*"?(\d{1,10})"?/.exec(directives)
  const stated = /no-store|no-cache/.test(directives) || !maxAge ? 0 : Number(maxAge[1])
  return Math.min(max, Math.max(min, stated))
}

export function createMetadataDocumentService(deps: MetadataDocumentDeps) {
  const { db, clock, config } = deps
  const audit = deps.audit ?? NO_AUDIT
  /** One fetch per client_id at a time in this process: a burst of authorizations shares it. */
  const inFlight = new Map<string, Promise<Client>>()
  /** While a kept copy serves because its publisher failed: not before this time again (ms). */
  const retryAfter = new Map<string, number>()

  function policyProblem(clientId: string): string | null {
    if (!config.clientMetadataDocuments)
      return 'This server does not accept applications identified by a URL.'
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

  async function refresh(clientId: string, kept: Client | undefined, from?: RequestFacts): Promise<Client> {
    const now = clock.now()
    let fetched
    try {
      fetched = await fetchClientDocument(clientId, {
        timeoutMs: config.clientMetadataFetchTimeoutMs,
        maxBytes: config.clientMetadataMaxBytes,
        testCa: deps.testCa,
        resolve: deps.resolve,
      })
    } catch (err) {
      if (!(err instanceof DocumentFetchError)) throw err
      // A kept copy serves a little longer while its publisher is unreachable (bounded).
      if (
        kept?.documentExpiresAt &&
        now < addSeconds(kept.documentExpiresAt, config.clientMetadataStaleMax)
      ) {
        if (retryAfter.size >= 10_000) retryAfter.clear()
        retryAfter.set(clientId, now.getTime() + RETRY_AFTER_FAILURE_MS)
        deps.logger?.warn(
          { clientId, reason: err.message },
          'client metadata document unreachable; serving the kept copy',
        )
        return kept
      }
      throw new ClientRefused(`The application's metadata document could not be used: ${err.message}.`)
    }
    let stated
    try {
      const body = fetched.body as Record<string, unknown> | null
      if (typeof body !== 'object' || body === null || body.client_id !== clientId)
        throw new ClientMetadataProblem('its client_id is not exactly the URL it was fetched from')
      stated = readStatedMetadata(body)
    } catch (err) {
      if (err instanceof ClientMetadataProblem)
        throw new ClientRefused(`The application's metadata document is not acceptable: ${err.message}.`)
      throw err
    }
    retryAfter.delete(clientId)
    const allowed = config.clientMetadataScopes.length > 0 ? config.clientMetadataScopes : ALL_SCOPES
    const scopes = (stated.scopes ?? ALL_SCOPES).filter((s) => allowed.includes(s))
    if (scopes.length === 0)
      throw new ClientRefused(
        'The application asks only for scopes this server does not give such applications.',
      )
    const seconds = freshnessSeconds(
      fetched.cacheControl,
      config.clientMetadataCacheMin,
      config.clientMetadataCacheMax,
    )
    const host = new URL(clientId).host
    const result = await inRetriedTransaction(db, async (trx) => {
      // The block list is read again under the row's lock: a block committed meanwhile wins.
      if (await findBlockedClientId(trx, clientId))
        throw new ClientRefused('The operator has blocked this application.')
      const { before, client } = await upsertDocumentClient(trx, {
        id: clientId,
        name: stated.name ?? host,
        redirectUris: stated.redirectUris,
        scopes,
        metadata: {
          homepageUrl: stated.homepageUrl,
          privacyPolicyUrl: stated.privacyPolicyUrl,
          termsUrl: stated.termsUrl,
          description: null,
        },
        fetchedAt: now,
        expiresAt: addSeconds(now, seconds),
      })
      if (!client) throw new ClientRefused('No application has this client_id.')
      await recordChange(trx, before, client, from)
      return { before, client }
    })
    if (!result.before || !sameList(result.before.redirectUris, result.client.redirectUris)) deps.changed?.()
    return result.client
  }

  /**
   * First sight, and a document that changed after users consented: a new redirect URI revokes every
   * live grant (users consent again, seeing where codes now go); a removed URI or scope narrows the
   * grants as an operator's change does.
   */
  async function recordChange(
    trx: Kysely<Database>,
    before: Client | undefined,
    client: Client,
    from?: RequestFacts,
  ) {
    const actor = { kind: 'client' as const, id: client.id }
    const target = { kind: 'client' as const, id: client.id }
    if (!before) {
      await audit.record(trx, {
        type: 'client.first_seen',
        actor,
        target,
        clientId: client.id,
        details: { name: client.name, redirect_uris: client.redirectUris, scopes: client.scopes },
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
    await audit.record(trx, {
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
        grants_revoked: grantsRevoked,
      },
      from,
    })
  }

  return {
    /**
     * The client a client_id URL names, for the authorization endpoint: the kept row while fresh,
     * else the document read again. ClientRefused (with why) when the policy, the block list, the
     * fetch or the document says no.
     */
    async resolve(clientId: string, from?: RequestFacts): Promise<Client> {
      const problem = policyProblem(clientId)
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
      return policyProblem(clientId) === null
    },

    /**
     * Blocks a client_id URL, seen or not: its row (if any) is disabled and its grants revoked, and no
     * document read later unblocks it. 201 when added, 200 when it was blocked already.
     */
    async block(clientId: string, reason: string | null, from?: RequestFacts): Promise<{ created: boolean }> {
      const problem = clientIdUrlProblem(clientId)
      if (problem) throw new ProblemError(400, `client_id ${problem}.`)
      const created = await inRetriedTransaction(db, async (trx) => {
        const now = clock.now()
        const added = await insertBlockedClientId(trx, clientId, reason, now)
        if (!added) return false
        const disabled = await trx
          .updateTable('clients')
          .set((eb) => ({ disabled_at: eb.fn.coalesce('disabled_at', eb.val(now)) }))
          .where('id', '=', clientId)
          .returning('id')
          .executeTakeFirst()
        const revoked = disabled ? await deps.grants.revokeAllForClient(clientId, trx, from) : 0
        await audit.record(trx, {
          type: 'client.blocked',
          actor: OPERATOR,
          target: { kind: 'client', id: clientId },
          clientId,
          details: { reason, grants_revoked: revoked, seen: disabled !== undefined },
          from,
        })
        return true
      })
      deps.changed?.()
      return { created }
    },

    /** Takes a client_id URL off the block list; its row stays disabled until the operator enables it. */
    async unblock(clientId: string, from?: RequestFacts): Promise<void> {
      const removed = await db.transaction().execute(async (trx) => {
        const removed = await deleteBlockedClientId(trx, clientId)
        if (removed)
          await audit.record(trx, {
            type: 'client.unblocked',
            actor: OPERATOR,
            target: { kind: 'client', id: clientId },
            clientId,
            from,
          })
        return removed
      })
      if (!removed) throw new ProblemError(404, 'This client_id is not blocked.')
    },

    listBlocked: () => listBlockedClientIds(db),
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i])
}

export type MetadataDocumentService = ReturnType<typeof createMetadataDocumentService>
