import { DEFAULT_GRANT_TYPES, normalizeGrantTypes } from './grant-types.js'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Database } from '../db/database.js'
import { inRetriedTransaction } from '../db/transaction.js'
import { type AuditRecorder, OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import { ProblemError } from '../errors.js'
import type { ClientNarrowing, GrantService } from '../grants/grant.service.js'
import type { Clock } from '../lib/clock.js'
import { ALL_SCOPES, isSubset, normalizeScopes } from '../lib/scopes.js'
import { isClientId, newClientId } from '../lib/identifiers.js'
import type { ClientUpdate, NewClient } from './client-input.js'
import {
  type Client,
  disableClient as disableClientRow,
  enableClient as enableClientRow,
  findClientById,
  insertClient,
  lockClient,
  setClientStanding,
  type StandingOverride,
  updateClient as updateClientRow,
} from './client.repository.js'
import { metadataOf } from './display-metadata.js'

/** A client after an update, and what narrowing it did to live grants (nothing when it widened). */
export interface UpdatedClient {
  client: Client
  narrowing: ClientNarrowing | undefined
}

/** What the operator's changes to clients need; the client service builds it once. */
export interface ClientAdminDeps {
  db: Kysely<Database>
  clock: Clock
  grants: Pick<GrantService, 'narrowForClient' | 'revokeAllForClient'>
  audit: AuditRecorder
  /** The set of enabled clients changed: CORS reads the table again. */
  changed: () => void
  /** Where a new client is logged (its id, name, redirect URIs and scopes: a client has no secret). */
  logger?: Pick<Logger, 'info'> | undefined
}

const noSuchClient = () => new ProblemError(404, 'No client with this id.')

/** The operator's default scopes, normalized; 400 unless among the client's scopes (null: all of them). */
function checkedDefaultScopes(defaults: string[] | null, scopes: readonly string[]): string[] | null {
  if (defaults === null) return null
  if (!isSubset(defaults, scopes))
    throw new ProblemError(
      400,
      `default_scopes must be among the client's scopes (${scopes.join(' ')}); to narrow scopes below them, send default_scopes too (null: all of them).`,
    )
  return normalizeScopes(defaults)
}

/** The client with this id, disabled or not; unknown id → 404. */
export async function getClient(deps: Pick<ClientAdminDeps, 'db'>, id: string): Promise<Client> {
  const client = await findClientById(deps.db, id)
  if (!client) throw noSuchClient()
  return client
}

/**
 * RFC 7591 §2: redirect URIs are for the code grant; a client without it (device-only, RFC 8628) may
 * have none. 400 when a client that may use the code grant would be left without one.
 */
function checkRedirectUris(redirectUris: readonly string[], grantTypes: readonly string[]): void {
  if (redirectUris.length === 0 && grantTypes.includes('authorization_code'))
    throw new ProblemError(
      400,
      'redirect_uris: at least one redirect URI while grant_types includes authorization_code (none only for a device-only client)',
      'redirect_uris',
    )
}

/** Registers a client (POST /admin/clients), with its client.created row. */
export async function createClient(
  deps: ClientAdminDeps,
  input: NewClient,
  from: RequestFacts | undefined,
): Promise<Client> {
  const scopes = normalizeScopes(input.scopes ?? ALL_SCOPES)
  const defaultScopes = checkedDefaultScopes(input.default_scopes ?? null, scopes)
  checkRedirectUris(input.redirect_uris, input.grant_types ?? DEFAULT_GRANT_TYPES)
  const client = await deps.db.transaction().execute(async (trx) => {
    const created = await insertClient(trx, {
      id: newClientId(),
      name: input.name,
      redirectUris: input.redirect_uris,
      scopes,
      defaultScopes,
      requireDpop: input.require_dpop ?? false,
      requirePar: input.require_pushed_authorization_requests ?? false,
      grantTypes: input.grant_types && normalizeGrantTypes(input.grant_types),
      metadata: metadataOf(input),
    })
    await deps.audit.record(trx, {
      type: 'client.created',
      actor: OPERATOR,
      target: { kind: 'client', id: created.id },
      clientId: created.id,
      details: {
        name: created.name,
        redirect_uris: created.redirectUris,
        scopes: created.scopes,
        ...(created.defaultScopes ? { default_scopes: created.defaultScopes } : {}),
        standing: created.standing,
      },
      from,
    })
    return created
  })
  deps.changed()
  deps.logger?.info(
    { client_id: client.id, name: client.name, redirect_uris: client.redirectUris, scopes: client.scopes },
    'client created',
  )
  return client
}

/**
 * Changes what is given, in one transaction with the client's row locked. Removing a scope or a
 * redirect URI applies to the next request (authorize reads the client from the database; the CORS
 * origins here at once, on other instances within their snapshot age); removing a scope also
 * narrows or revokes what was granted with it (GrantService.narrowForClient), announced on the
 * revocation feed. Unknown id → 404.
 */
export async function updateClient(
  deps: ClientAdminDeps,
  id: string,
  patch: ClientUpdate,
  from: RequestFacts | undefined,
): Promise<UpdatedClient> {
  if (!isClientId(id)) throw noSuchClient()
  // Deadlocks with a concurrent refresh or consent roll the whole transaction back: run it again.
  const updated = await inRetriedTransaction(deps.db, async (trx) => {
    const current = await lockClient(trx, id)
    if (!current) throw noSuchClient()
    const scopes = patch.scopes ? normalizeScopes(patch.scopes) : current.scopes
    const redirectUris = patch.redirect_uris ?? current.redirectUris
    const defaultScopes = checkedDefaultScopes(
      patch.default_scopes !== undefined ? patch.default_scopes : current.defaultScopes,
      scopes,
    )
    checkRedirectUris(redirectUris, patch.grant_types ?? current.grantTypes)
    const client = await updateClientRow(trx, id, {
      name: patch.name,
      redirectUris: patch.redirect_uris,
      scopes: patch.scopes ? scopes : undefined,
      defaultScopes: patch.default_scopes !== undefined ? defaultScopes : undefined,
      grantTypes: patch.grant_types && normalizeGrantTypes(patch.grant_types),
      metadata: metadataOf(patch),
      requirePar: patch.require_pushed_authorization_requests,
    })
    const scopeRemoved = current.scopes.some((s) => !scopes.includes(s))
    const removedUris = current.redirectUris.filter((u) => !redirectUris.includes(u))
    const narrowing =
      scopeRemoved || removedUris.length > 0
        ? await deps.grants.narrowForClient(id, scopes, removedUris, trx, from)
        : undefined
    await deps.audit.record(trx, {
      type: 'client.updated',
      actor: OPERATOR,
      target: { kind: 'client', id },
      clientId: id,
      details: {
        fields: Object.keys(patch).filter((k) => patch[k as keyof ClientUpdate] !== undefined),
        ...(patch.scopes ? { scopes, previous_scopes: current.scopes } : {}),
        ...(patch.default_scopes !== undefined
          ? { default_scopes: defaultScopes, previous_default_scopes: current.defaultScopes }
          : {}),
        ...(patch.redirect_uris ? { redirect_uris: redirectUris, removed_redirect_uris: removedUris } : {}),
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
  deps.changed()
  return updated
}

/**
 * Re-enables a disabled client: it can authorize again. What disabling revoked stays revoked (its
 * grants and refresh families keep revoked_at; users consent again). Unknown id → 404.
 */
export async function enableClient(
  deps: ClientAdminDeps,
  id: string,
  from: RequestFacts | undefined,
): Promise<Client> {
  return changeLockedClient(deps, id, async (trx, current) => {
    if (current.disabledAt === null) return current // already enabled: nothing changes, nothing recorded
    const enabled = await enableClientRow(trx, id)
    await deps.audit.record(trx, {
      type: 'client.enabled',
      actor: OPERATOR,
      target: { kind: 'client', id },
      clientId: id,
      from,
    })
    return enabled ?? current
  })
}

/**
 * One operator change to one client: its row locked in a transaction (unknown id → 404), `change`
 * writes and records what it does (or returns the client as it is), then the in-memory copies
 * (CORS origins, reserved names) are read again.
 */
async function changeLockedClient(
  deps: ClientAdminDeps,
  id: string,
  change: (trx: Kysely<Database>, current: Client) => Promise<Client>,
): Promise<Client> {
  if (!isClientId(id)) throw noSuchClient()
  const client = await deps.db.transaction().execute(async (trx) => {
    const current = await lockClient(trx, id)
    if (!current) throw noSuchClient()
    return change(trx, current)
  })
  deps.changed()
  return client
}

/**
 * Disables a client and revokes all its grants, in one transaction, run again from its start when
 * the revocation loses a deadlock to concurrent code exchanges (see revokeGrantsWhere).
 */
export async function disableClient(
  deps: ClientAdminDeps,
  id: string,
  from: RequestFacts | undefined,
): Promise<Client> {
  const client = await inRetriedTransaction(deps.db, async (trx) => {
    const client = await disableClientRow(trx, id, deps.clock.now())
    if (!client) throw noSuchClient()
    const revoked = await deps.grants.revokeAllForClient(id, trx, from)
    await deps.audit.record(trx, {
      type: 'client.disabled',
      actor: OPERATOR,
      target: { kind: 'client', id },
      clientId: id,
      details: { grants_revoked: revoked },
      from,
    })
    return client
  })
  deps.changed()
  return client
}

/**
 * The operator's decision on an app's standing (standing.ts): 'verified' vouches for an app that came
 * in by itself, 'unverified' takes a standing away, null goes back to what its kind gives. Recorded
 * (client.standing_changed) only when the decision changes.
 */
export async function setStanding(
  deps: ClientAdminDeps,
  id: string,
  override: StandingOverride | null,
  from: RequestFacts | undefined,
): Promise<Client> {
  return changeLockedClient(deps, id, async (trx, current) => {
    if (current.standingOverride === override) return current
    const changed = (await setClientStanding(trx, id, override, deps.clock.now())) ?? current
    await deps.audit.record(trx, {
      type: 'client.standing_changed',
      actor: OPERATOR,
      target: { kind: 'client', id },
      clientId: id,
      details: {
        name: changed.name,
        kind: changed.kind,
        standing: changed.standing,
        previous_standing: current.standing,
        override,
      },
      from,
    })
    return changed
  })
}
