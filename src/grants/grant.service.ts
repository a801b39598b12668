import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import {
  type AuditActor,
  type AuditRecorder,
  NO_AUDIT,
  OPERATOR,
  type RequestFacts,
} from '../audit/audit.service.js'
import { OAuthError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { newSecret } from '../lib/identifiers.js'
import { isSubset } from '../lib/scopes.js'
import { sha256 } from '../lib/secrets.js'
import {
  type CodeUnderLiveGrant,
  insertAuthorizationCode,
  type CodeForSession,
  insertAuthorizationCodesForSessions,
  insertAuthorizationCodeUnderLiveGrant,
} from './authorization-code.repository.js'
import { redirectUriMatches } from '../clients/redirect-uri.js'
import { type CodeRedemption, redeemAuthorizationCode } from './code-redemption.js'
import { type CodeRedemptionValues, redeemAuthorizationCodeRows } from './code-redemption.repository.js'
import { batchedWrite } from '../db/batched-write.js'
import { inRetriedTransaction } from '../db/transaction.js'
import type { IssuedRefreshToken, RefreshLifetimes } from './refresh-rotation.js'
import { type RevokedGrant, revokeGrantsWhere } from './grant-revocation.repository.js'
import {
  type ClientNarrowing,
  forgetResourceInGrants,
  NARROWED_REASON,
  narrowClientGrants,
  type ResourceForgotten,
} from './grant-narrowing.repository.js'
import {
  findLiveGrant,
  type Grant,
  hasOnlyRevokedGrants,
  lockEnabledClient,
  upsertGrant,
} from './grant.repository.js'
import { type LiveGrantSummary, listLiveGrantsOfUser } from './grant-listing.repository.js'

export type {
  ClientNarrowing,
  CodeRedemption,
  ResourceForgotten,
  Grant,
  IssuedRefreshToken,
  LiveGrantSummary,
}

/** What an authorization code is bound to (RFC 6749 §4.1.2, RFC 7636 §4.4). */
export interface CodeRequest {
  userId: string
  clientId: string
  redirectUri: string
  scopes: string[]
  codeChallenge: string
  /** RFC 8707 resource indicators the code is for; none (the default) for the default audience. */
  resources?: string[]
  /** RFC 9449 §10: the DPoP key thumbprint the code is bound to (dpop_jkt); none by default. */
  dpopJkt?: string | null
  /** The request the user allowed it in, for the audit row of the consent. */
  from?: RequestFacts | undefined
}

/** The plain code exists only here and in the redirect; the database keeps sha256(code). */
export interface IssuedCode {
  code: string
  grantId: string
  expiresAt: Date
}

/** The lifetimes the grant service applies, in seconds (from Config). */
export type GrantLifetimes = RefreshLifetimes & { authCodeTtl: number }

/** What the grant service reports as it happens (metrics listen here; not the revocation feed). */
export interface GrantMetricHooks {
  codeReplayed?(): void
  /** `count` grants were revoked. */
  revoked?(kind: 'grant', count: number): void
}

export function createGrantService(
  db: Kysely<Database>,
  clock: Clock,
  lifetimes: GrantLifetimes,
  metricHooks: GrantMetricHooks = {},
  audit: AuditRecorder = NO_AUDIT,
) {
  // Concurrent authorizations of returning users share one statement (see batchedWrite).
  const insertForSessionShared = batchedWrite({
    many: (codes: CodeForSession[]) => insertAuthorizationCodesForSessions(db, codes),
    key: (code) => code.codeHash,
  })
  // Concurrent exchanges of distinct codes share one statement (see batchedWrite).
  const redeemShared = batchedWrite({
    many: (list: CodeRedemptionValues[]) => redeemAuthorizationCodeRows(db, list),
    key: (values) => values.codeHash,
  })
  /** One grant.revoked row per grant a revocation ended, in the revocation's transaction. */
  const recordRevoked = (
    t: Kysely<Database>,
    revoked: RevokedGrant[],
    actor: AuditActor,
    reason: string,
    from: RequestFacts | undefined,
  ) =>
    audit.record(
      t,
      revoked.map((g) => ({
        type: 'grant.revoked' as const,
        actor,
        target: { kind: 'grant' as const, id: g.id },
        userId: g.userId,
        clientId: g.clientId,
        details: { reason },
        from,
      })),
    )

  const inTransaction = <T>(trx: Kysely<Database> | undefined, run: (t: Kysely<Database>) => Promise<T>) =>
    trx ? run(trx) : db.transaction().execute(run)

  async function insertCode(t: Kysely<Database>, request: CodeRequest, grantId: string): Promise<IssuedCode> {
    const { code, fields } = newCode(request)
    await insertAuthorizationCode(t, { ...fields, userId: request.userId, grantId })
    return { code, grantId, expiresAt: fields.expiresAt }
  }

  /** A fresh code for `request`: the plain code, and the row fields (with its hash) to store. */
  function newCode(request: Omit<CodeRequest, 'userId'>) {
    const code = newSecret()
    const now = clock.now()
    const fields: Omit<CodeUnderLiveGrant, 'userId'> = {
      codeHash: sha256(code),
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      codeChallenge: request.codeChallenge,
      resources: request.resources ?? [],
      dpopJkt: request.dpopJkt ?? null,
      createdAt: now,
      expiresAt: addSeconds(now, lifetimes.authCodeTtl),
    }
    return { code, fields }
  }

  /** A new code for `request`, written by `insert` only where its conditions hold. */
  async function issueUnder(
    insert: (fields: Omit<CodeUnderLiveGrant, 'userId'>) => Promise<string | undefined>,
    request: Omit<CodeRequest, 'userId'>,
  ): Promise<IssuedCode | undefined> {
    const { code, fields } = newCode(request)
    const grantId = await insert(fields)
    return grantId === undefined ? undefined : { code, grantId, expiresAt: fields.expiresAt }
  }

  async function revokeOne(
    userId: string,
    clientId: string,
    actor: AuditActor,
    reason: string,
    from: RequestFacts | undefined,
  ) {
    const ids = await inRetriedTransaction(db, async (t) => {
      const revoked = await revokeGrantsWhere(t, { userId, clientId }, clock.now(), reason)
      await recordRevoked(t, revoked, actor, reason, from)
      return revoked
    })
    metricHooks.revoked?.('grant', ids.length)
    return ids.length > 0
  }

  return {
    /** The user's live grant for a client, if any. */
    findLiveGrant: (userId: string, clientId: string) => findLiveGrant(db, userId, clientId),

    /**
     * The user said Allow: creates or widens the (user, client) grant and issues a code bound to
     * it, in one transaction (the caller's `trx` when given, so that more can join it).
     */
    approveAndIssueCode(request: CodeRequest, trx?: Kysely<Database>): Promise<IssuedCode> {
      return inTransaction(trx, async (t) => {
        const client = await lockEnabledClient(t, request.clientId)
        if (!client) throw new OAuthError('invalid_client', 'No enabled application has this client_id.', 400)
        // The operator may have narrowed the client since the request was checked (PATCH /admin/clients).
        if (!isSubset(request.scopes, client.scopes))
          throw new OAuthError(
            'invalid_scope',
            'This application may no longer ask for some of these scopes.',
            400,
          )
        if (!redirectUriMatches(client.redirectUris, request.redirectUri))
          throw new OAuthError(
            'invalid_request',
            'This redirect_uri is not registered for the application.',
            400,
          )
        const before = await findLiveGrant(t, request.userId, request.clientId)
        const grant = await upsertGrant(t, request, clock.now())
        const widened =
          before !== undefined &&
          (grant.scopes.length > before.scopes.length || grant.resources.length > before.resources.length)
        await audit.record(t, {
          type: widened ? 'consent.widened' : 'consent.granted',
          actor: { kind: 'user', id: request.userId },
          target: { kind: 'grant', id: grant.id },
          userId: request.userId,
          clientId: request.clientId,
          details: {
            scopes: grant.scopes,
            ...(grant.resources.length > 0 ? { resources: grant.resources } : {}),
            ...(before ? { previous_scopes: before.scopes } : {}),
          },
          from: request.from,
        })
        return insertCode(t, request, grant.id)
      })
    },

    /**
     * Remembered consent: issues a code only if the live grant still covers every requested scope and
     * resource,
     * in one statement without a row lock (see insertAuthorizationCodeUnderLiveGrant). Undefined when
     * there is no such grant (the user must be asked).
     */
    async issueCodeUnderLiveGrant(
      request: CodeRequest,
      trx?: Kysely<Database>,
    ): Promise<IssuedCode | undefined> {
      return issueUnder(
        (fields) => insertAuthorizationCodeUnderLiveGrant(trx ?? db, { ...fields, userId: request.userId }),
        request,
      )
    },

    /**
     * A returning user's authorization in one statement: a code when the session whose token hashes
     * to `sessionTokenHash` is live and its user's live grant covers the request, and the client is
     * enabled with this exact redirect_uri and these scopes (see insertAuthorizationCodeForSession).
     * Undefined when any of that does not hold; nothing is written then.
     */
    issueCodeForSession(
      request: Omit<CodeRequest, 'userId'>,
      sessionTokenHash: string,
    ): Promise<IssuedCode | undefined> {
      return issueUnder((fields) => insertForSessionShared({ ...fields, sessionTokenHash }), request)
    },

    /**
     * Revokes every live grant of a user (every connected application) and their refresh families,
     * inside the caller's transaction (a password reset, or a change that disconnects everything),
     * with a grant.revoked row each; the revocation feed hears of each grant through its trigger.
     * The caller opens that transaction with inRetriedTransaction: a revocation of several grants can
     * lose a deadlock to the token endpoint's batched statements (see revokeGrantsWhere).
     */
    async revokeAllForUser(
      trx: Kysely<Database>,
      userId: string,
      reason: 'password_reset' | 'password_changed',
      from?: RequestFacts,
    ): Promise<number> {
      const revoked = await revokeGrantsWhere(trx, { userId }, clock.now(), reason)
      await recordRevoked(trx, revoked, { kind: 'user', id: userId }, reason, from)
      metricHooks.revoked?.('grant', revoked.length)
      return revoked.length
    },
    /**
     * Revokes every live grant of a client and their refresh families. Pass `trx` to make it part
     * of a larger transaction, opened with inRetriedTransaction as for revokeAllForUser; without it,
     * it runs in one of its own, run again when it loses a deadlock. `why`: the operator disabled
     * it (the default), or its metadata document named a new redirect URI (the client's doing).
     */
    async revokeAllForClient(
      clientId: string,
      trx?: Kysely<Database>,
      from?: RequestFacts,
      why: { reason: 'client_disabled' | 'client_document_changed'; actor: AuditActor } = {
        reason: 'client_disabled',
        actor: OPERATOR,
      },
    ): Promise<number> {
      const run = async (t: Kysely<Database>) => {
        const revoked = await revokeGrantsWhere(t, { clientId }, clock.now(), why.reason)
        await recordRevoked(t, revoked, why.actor, why.reason, from)
        return revoked
      }
      const ids = await (trx ? run(trx) : inRetriedTransaction(db, run))
      metricHooks.revoked?.('grant', ids.length)
      return ids.length
    },
    /**
     * Dynamic registrations about to be deleted (RFC 7592 delete, housekeeping): every live grant of
     * them is revoked first, in the caller's transaction, with a grant.revoked row each naming why
     * (`registration_deleted`, `registration_expired`), so that the trail and the revocation metric
     * count them as any revocation. The caller disables the clients first: the feed then announces
     * one client-disabled event per client (grant events are covered by it). The caller's
     * transaction is opened with inRetriedTransaction, as for revokeAllForUser.
     */
    async revokeAllForRemovedClients(
      clientIds: readonly string[],
      reason: 'registration_deleted' | 'registration_expired',
      actor: AuditActor,
      trx: Kysely<Database>,
      from?: RequestFacts,
    ): Promise<number> {
      const revoked = await revokeGrantsWhere(trx, { clientIds }, clock.now(), reason)
      await recordRevoked(trx, revoked, actor, reason, from)
      metricHooks.revoked?.('grant', revoked.length)
      return revoked.length
    },
    /**
     * The operator narrowed a client's scopes or removed redirect URIs: what was granted beyond the
     * new registration stops working at once (see narrowClientGrants). Inside the caller's
     * transaction, which holds the client's row lock.
     */
    async narrowForClient(
      clientId: string,
      remainingScopes: readonly string[],
      removedRedirectUris: readonly string[],
      trx: Kysely<Database>,
      from?: RequestFacts,
    ): Promise<ClientNarrowing> {
      const done = await narrowClientGrants(trx, clientId, remainingScopes, removedRedirectUris, clock.now())
      await recordRevoked(trx, done.grantsRevoked, OPERATOR, NARROWED_REASON, from)
      metricHooks.revoked?.('grant', done.grantsRevoked.length)
      return done
    },
    /**
     * A resource server was deleted: families that named its resource are revoked, grants forget it,
     * unredeemed codes for it expire (see forgetResourceInGrants). Inside the caller's transaction.
     */
    forgetResource: (resource: string, trx: Kysely<Database>): Promise<ResourceForgotten> =>
      forgetResourceInGrants(trx, resource, clock.now()),
    /**
     * The user disconnects an application: revokes their live grant to it and every refresh family
     * under it, in one transaction. False when there was nothing live to revoke.
     */
    revokeForUser: (userId: string, clientId: string, from?: RequestFacts): Promise<boolean> =>
      revokeOne(userId, clientId, { kind: 'user', id: userId }, 'user_revoked', from),
    /** The operator revokes one user's grant to one application (admin API); as revokeForUser. */
    revokeByOperator: (userId: string, clientId: string, from?: RequestFacts): Promise<boolean> =>
      revokeOne(userId, clientId, OPERATOR, 'operator_revoked', from),
    /** Whether the user had a grant to the client, now revoked with no live one since. */
    hadRevokedGrant: (userId: string, clientId: string): Promise<boolean> =>
      hasOnlyRevokedGrants(db, userId, clientId),
    /** The user's live grants to enabled clients, with the client's name, oldest first. */
    listLiveGrantsOfUser: (userId: string): Promise<LiveGrantSummary[]> => listLiveGrantsOfUser(db, userId),
    /** authorization_code grant: consumes the code and starts a refresh family. Throws OAuthError. */
    redeemAuthorizationCode: (input: CodeRedemption): Promise<IssuedRefreshToken> =>
      redeemAuthorizationCode(db, clock, lifetimes, input, metricHooks, audit, redeemShared),
  }
}

export type GrantService = ReturnType<typeof createGrantService>
