import type { RequestFacts } from '../audit/audit.service.js'
import type { Kysely } from 'kysely'
import { sessionTokenHash } from '../accounts/session.service.js'
import type { Database } from '../db/database.js'
import type { GrantService, IssuedCode } from '../grants/grant.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isSubset } from '../lib/scopes.js'
import { hasNul, isClientId, isShortId, newShortId } from '../lib/identifiers.js'
import type { AuthorizationRequest, PromptValue } from './authorize-request.js'
import {
  completePendingAuthorization,
  findOpenPendingAuthorization,
  insertPendingAuthorization,
  type PendingAuthorization,
  setPendingAuthorizationSession,
} from './pending-authorization.repository.js'

export type { PendingAuthorization }

/** Long enough to sign in and read the consent page, short enough not to linger. */
const PENDING_TTL_SECONDS = 600
export function promptOf(pending: PendingAuthorization): PromptValue[] {
  return pending.prompt ? (pending.prompt.split(' ') as PromptValue[]) : []
}

export function requestOf(pending: PendingAuthorization): AuthorizationRequest {
  return {
    clientId: pending.clientId,
    redirectUri: pending.redirectUri,
    scopes: pending.scopes,
    state: pending.state,
    codeChallenge: pending.codeChallenge,
    prompt: promptOf(pending),
    resources: pending.resources,
    dpopJkt: pending.dpopJkt,
    uiLocale: pending.uiLocale,
  }
}

/** The authorization endpoint's rules (RFC 6749 §4.1): pending requests, consent, codes. */
export function createAuthorizeService(db: Kysely<Database>, clock: Clock, grants: GrantService) {
  const codeRequest = (request: AuthorizationRequest, userId: string) => ({
    userId,
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    codeChallenge: request.codeChallenge,
    resources: request.resources,
    dpopJkt: request.dpopJkt,
  })

  return {
    /** Keeps a validated request server-side under a random id while the user signs in or consents. */
    createPending(request: AuthorizationRequest): Promise<PendingAuthorization> {
      const now = clock.now()
      return insertPendingAuthorization(db, {
        id: newShortId(),
        clientId: request.clientId,
        redirectUri: request.redirectUri,
        scopes: request.scopes,
        state: request.state,
        codeChallenge: request.codeChallenge,
        prompt: request.prompt.length > 0 ? request.prompt.join(' ') : null,
        resources: request.resources,
        dpopJkt: request.dpopJkt,
        uiLocale: request.uiLocale ?? null,
        createdAt: now,
        expiresAt: addSeconds(now, PENDING_TTL_SECONDS),
      })
    },

    async findOpenPending(id: unknown): Promise<PendingAuthorization | undefined> {
      return isShortId(id) ? findOpenPendingAuthorization(db, id, clock.now()) : undefined
    },

    recordSignIn: (pendingId: string, sessionId: string) =>
      setPendingAuthorizationSession(db, pendingId, sessionId),

    /**
     * The hot path: a returning user whose browser holds a live session (its cookie's value is
     * `sessionToken`) and whose live grant covers the request gets a code in one statement, with the
     * client, its redirect_uri and its scopes checked by the same statement. Undefined when anything
     * is missing: the caller then takes the long way, which finds out what and answers for it.
     */
    issueForSession(request: AuthorizationRequest, sessionToken: string | undefined) {
      const tokenHash = sessionTokenHash(sessionToken)
      // No client of ours has another id shape, no registered URI a NUL (which PostgreSQL cannot
      // compare): such a request goes the long way, which answers it without a query.
      if (!tokenHash || !isClientId(request.clientId) || hasNul(request.redirectUri))
        return Promise.resolve(undefined)
      return grants.issueCodeForSession(request, tokenHash)
    },

    /**
     * Whether the user's live grant already covers every requested scope and resource: for a native
     * app's redirect URI this is a one-click confirmation, not a code (RFC 8252 §8.6). Writes nothing.
     */
    async isCoveredByLiveGrant(request: AuthorizationRequest, userId: string): Promise<boolean> {
      const grant = await grants.findLiveGrant(userId, request.clientId)
      return (
        grant !== undefined &&
        isSubset(request.scopes, grant.scopes) &&
        isSubset(request.resources, grant.resources)
      )
    },

    /**
     * Remembered consent: a code at once when the live grant already covers every requested scope
     * and every requested resource.
     * With a pending request, it is completed in the same transaction (it cannot be used twice).
     * 'ask' when the user has to see the consent page; 'gone' when the pending request was used.
     */
    async issueWithRememberedConsent(
      request: AuthorizationRequest,
      userId: string,
      pendingId?: string,
    ): Promise<IssuedCode | 'ask' | 'gone'> {
      const code = codeRequest(request, userId)
      // The hot path (no pending request: a returning, signed-in user) is one statement.
      if (!pendingId) return (await grants.issueCodeUnderLiveGrant(code)) ?? 'ask'
      return db
        .transaction()
        .execute(async (trx) => {
          const issued = await grants.issueCodeUnderLiveGrant(code, trx)
          if (!issued) return 'ask'
          if (!(await completePendingAuthorization(trx, pendingId, clock.now()))) throw new PendingGone()
          return issued
        })
        .catch((err: unknown) => {
          if (err instanceof PendingGone) return 'gone' as const
          throw err
        })
    },

    /**
     * The user's answer on the consent page. Completing the pending request, widening the grant and
     * issuing the code are one transaction; undefined when the request was already answered or
     * expired, so a double submit gets at most one code.
     */
    async answer(
      pendingId: string,
      userId: string,
      allow: boolean,
      from?: RequestFacts,
    ): Promise<{ pending: PendingAuthorization; issued: IssuedCode | null } | undefined> {
      return db.transaction().execute(async (trx) => {
        const pending = await completePendingAuthorization(trx, pendingId, clock.now())
        if (!pending) return undefined
        if (!allow) return { pending, issued: null }
        const issued = await grants.approveAndIssueCode(
          { ...codeRequest(requestOf(pending), userId), from },
          trx,
        )
        return { pending, issued }
      })
    },
  }
}

/** Rolls back a remembered-consent code when its pending request was answered meanwhile. */
class PendingGone extends Error {}

export type AuthorizeService = ReturnType<typeof createAuthorizeService>
