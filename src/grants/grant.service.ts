import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import {
  type AuditActor,
  type AuditRecorder,
  NO_AUDIT,
  OPERATOR,
  type RequestFacts,
} from '../audit/audit.service.js'
import type { Clock } from '../lib/clock.js'
import { type CodeForSession, insertAuthorizationCodesForSessions } from './authorization-code.repository.js'
import {
  approveAndIssueCode,
  type CodeIssuanceDeps,
  type CodeRequest,
  issueCodeForSession,
  issueCodeUnderLiveGrant,
  type IssuedCode,
} from './code-issuance.js'
import { type CodeRedemption, redeemAuthorizationCode } from './code-redemption.js'
import { type CodeRedemptionValues, redeemAuthorizationCodeRows } from './code-redemption.repository.js'
import { batchedWrite } from '../db/batched-write.js'
import type { IssuedRefreshToken, RefreshLifetimes } from './refresh-rotation.js'
import {
  type ClientNarrowing,
  forgetResourceInGrants,
  type ResourceForgotten,
} from './grant-narrowing.repository.js'
import { narrowForClient } from './grant-narrowing.js'
import {
  type GrantRevocationDeps,
  revokeAllForClient,
  revokeAllForRemovedClients,
  revokeAllForUser,
  revokeGrantOf,
} from './grant-revocation.js'
import { findLiveGrant, type Grant, hasOnlyRevokedGrants } from './grant.repository.js'
import { type LiveGrantSummary, listLiveGrantsOfUser } from './grant-listing.repository.js'

export type {
  ClientNarrowing,
  CodeRedemption,
  CodeRequest,
  ResourceForgotten,
  Grant,
  IssuedCode,
  IssuedRefreshToken,
  LiveGrantSummary,
}

/** The lifetimes the grant service applies, in seconds (from Config). */
export type GrantLifetimes = RefreshLifetimes & {
  authCodeTtl: number
  /** ACCESS_TOKEN_TTL: how long an access token issued lives (the account page's "connected"). */
  accessTokenTtl?: number
}

/** What the grant service reports as it happens (metrics listen here; not the revocation feed). */
export interface GrantMetricHooks {
  codeReplayed?(): void
  /** `count` grants were revoked. */
  revoked?(kind: 'grant', count: number): void
}

/**
 * The (user, client) grant: wiring only. Each concern is a module of plain functions over the
 * dependencies built here: code-issuance.ts (consent and codes), code-redemption.ts (the code
 * exchange), grant-revocation.ts and grant-narrowing.ts (what ends or shrinks grants); listing reads
 * the repositories directly.
 */
export function createGrantService(
  db: Kysely<Database>,
  clock: Clock,
  lifetimes: GrantLifetimes,
  metricHooks: GrantMetricHooks = {},
  audit: AuditRecorder = NO_AUDIT,
) {
  // Concurrent authorizations of returning users share one statement (see batchedWrite).
  const insertForSession = batchedWrite({
    many: (codes: CodeForSession[]) => insertAuthorizationCodesForSessions(db, codes),
    key: (code) => code.codeHash,
  })
  // Concurrent exchanges of distinct codes share one statement (see batchedWrite).
  const redeemShared = batchedWrite({
    many: (list: CodeRedemptionValues[]) => redeemAuthorizationCodeRows(db, list),
    key: (values) => values.codeHash,
  })
  const issuing: CodeIssuanceDeps = { db, clock, lifetimes, audit, insertForSession }
  const revoking: GrantRevocationDeps = { db, clock, audit, metricHooks }

  return {
    /** The user's live grant for a client, if any. */
    findLiveGrant: (userId: string, clientId: string) => findLiveGrant(db, userId, clientId),

    /**
     * The user said Allow: creates or widens the (user, client) grant and issues a code bound to
     * it, in one transaction (the caller's `trx` when given, so that more can join it).
     */
    approveAndIssueCode: (request: CodeRequest, trx?: Kysely<Database>): Promise<IssuedCode> =>
      approveAndIssueCode(issuing, request, trx),

    /**
     * Remembered consent: a code only if the live grant still covers every requested scope and
     * resource, in one statement without a row lock. Undefined when there is no such grant.
     */
    issueCodeUnderLiveGrant: (
      request: CodeRequest,
      trx?: Kysely<Database>,
    ): Promise<IssuedCode | undefined> => issueCodeUnderLiveGrant(issuing, request, trx),

    /**
     * A returning user's authorization in one statement (shared among concurrent requests):
     * undefined, and nothing written, when the session, grant or client does not cover it.
     */
    issueCodeForSession: (
      request: Omit<CodeRequest, 'userId'>,
      sessionTokenHash: string,
    ): Promise<IssuedCode | undefined> => issueCodeForSession(issuing, request, sessionTokenHash),

    /**
     * Revokes every live grant of a user and their refresh families, inside the caller's
     * transaction (a password reset, or a change that disconnects everything), opened with
     * inRetriedTransaction; a grant.revoked row each, the revocation feed hears of each grant through
     * its trigger.
     */
    revokeAllForUser: (
      trx: Kysely<Database>,
      userId: string,
      reason: 'password_reset' | 'password_changed',
      from?: RequestFacts,
    ): Promise<number> => revokeAllForUser(revoking, trx, userId, reason, from),
    /**
     * Revokes every live grant of a client and their refresh families. Pass `trx` to make it part
     * of a larger transaction, opened with inRetriedTransaction as for revokeAllForUser; without it,
     * it runs in one of its own, run again when it loses a deadlock. `why`: the operator disabled
     * it (the default), or its metadata document named a new redirect URI (the client's doing).
     */
    revokeAllForClient: (
      clientId: string,
      trx?: Kysely<Database>,
      from?: RequestFacts,
      why: { reason: 'client_disabled' | 'client_document_changed'; actor: AuditActor } = {
        reason: 'client_disabled',
        actor: OPERATOR,
      },
    ): Promise<number> => revokeAllForClient(revoking, clientId, trx, from, why),
    /**
     * Dynamic registrations about to be deleted (RFC 7592 delete, housekeeping): every live grant of
     * them is revoked first, in the caller's transaction, with a grant.revoked row each naming why
     * (`registration_deleted`, `registration_expired`), so that the trail and the revocation metric
     * count them as any revocation. The caller disables the clients first: the feed then announces
     * one client-disabled event per client (grant events are covered by it). The caller's
     * transaction is opened with inRetriedTransaction, as for revokeAllForUser.
     */
    revokeAllForRemovedClients: (
      clientIds: readonly string[],
      reason: 'registration_deleted' | 'registration_expired',
      actor: AuditActor,
      trx: Kysely<Database>,
      from?: RequestFacts,
    ): Promise<number> => revokeAllForRemovedClients(revoking, clientIds, reason, actor, trx, from),
    /**
     * The operator narrowed a client's scopes or removed redirect URIs: what was granted beyond the
     * new registration stops working at once. Inside the caller's transaction, which holds the
     * client's row lock.
     */
    narrowForClient: (
      clientId: string,
      remainingScopes: readonly string[],
      removedRedirectUris: readonly string[],
      trx: Kysely<Database>,
      from?: RequestFacts,
    ): Promise<ClientNarrowing> =>
      narrowForClient(revoking, clientId, remainingScopes, removedRedirectUris, trx, from),
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
      revokeGrantOf(revoking, userId, clientId, { kind: 'user', id: userId }, 'user_revoked', from),
    /** The operator revokes one user's grant to one application (admin API); as revokeForUser. */
    revokeByOperator: (userId: string, clientId: string, from?: RequestFacts): Promise<boolean> =>
      revokeGrantOf(revoking, userId, clientId, OPERATOR, 'operator_revoked', from),
    /** Whether the user had a grant to the client, now revoked with no live one since. */
    hadRevokedGrant: (userId: string, clientId: string): Promise<boolean> =>
      hasOnlyRevokedGrants(db, userId, clientId),
    /** The user's live grants to enabled clients, with the client's name, oldest first. */
    listLiveGrantsOfUser: (userId: string): Promise<LiveGrantSummary[]> =>
      listLiveGrantsOfUser(db, userId, clock.now(), lifetimes.accessTokenTtl ?? 600),
    /** authorization_code grant: consumes the code and starts a refresh family. Throws OAuthError. */
    redeemAuthorizationCode: (input: CodeRedemption): Promise<IssuedRefreshToken> =>
      redeemAuthorizationCode(db, clock, lifetimes, input, metricHooks, audit, redeemShared),
  }
}

export type GrantService = ReturnType<typeof createGrantService>
