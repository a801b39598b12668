import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { OAuthError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { newSecret } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import {
  type CodeUnderLiveGrant,
  insertAuthorizationCode,
  insertAuthorizationCodeForSession,
  insertAuthorizationCodeUnderLiveGrant,
} from './authorization-code.repository.js'
import { type CodeRedemption, redeemAuthorizationCode } from './code-redemption.js'
import type { IssuedRefreshToken, RefreshLifetimes } from './refresh-rotation.js'
import { revokeGrantsWhere } from './grant-revocation.repository.js'
import { findLiveGrant, type Grant, lockEnabledClient, upsertGrant } from './grant.repository.js'
import { type LiveGrantSummary, listLiveGrantsOfUser } from './grant-listing.repository.js'

export type { CodeRedemption, Grant, IssuedRefreshToken, LiveGrantSummary }

/** What an authorization code is bound to (RFC 6749 §4.1.2, RFC 7636 §4.4). */
export interface CodeRequest {
  userId: string
  clientId: string
  redirectUri: string
  scopes: string[]
  codeChallenge: string
  /** RFC 8707 resource indicators the code is for; none (the default) for the default audience. */
  resources?: string[]
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
) {
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

  return {
    /** The user's live grant for a client, if any. */
    findLiveGrant: (userId: string, clientId: string) => findLiveGrant(db, userId, clientId),

    /**
     * The user said Allow: creates or widens the (user, client) grant and issues a code bound to
     * it, in one transaction (the caller's `trx` when given, so that more can join it).
     */
    approveAndIssueCode(request: CodeRequest, trx?: Kysely<Database>): Promise<IssuedCode> {
      return inTransaction(trx, async (t) => {
        if (!(await lockEnabledClient(t, request.clientId)))
          throw new OAuthError('invalid_client', 'No enabled application has this client_id.', 400)
        const grant = await upsertGrant(t, request, clock.now())
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
      return issueUnder(
        (fields) => insertAuthorizationCodeForSession(db, { ...fields, sessionTokenHash }),
        request,
      )
    },

    /**
     * Revokes every live grant of a client and their refresh families. Pass `trx` to make it part
     * of a larger transaction; without it, it runs in one of its own.
     */
    async revokeAllForClient(clientId: string, trx?: Kysely<Database>): Promise<number> {
      const run = (t: Kysely<Database>) => revokeGrantsWhere(t, { clientId }, clock.now(), 'client_disabled')
      const ids = await inTransaction(trx, run)
      metricHooks.revoked?.('grant', ids.length)
      return ids.length
    },
    /**
     * The user disconnects an application: revokes their live grant to it and every refresh family
     * under it, in one transaction. False when there was nothing live to revoke.
     */
    async revokeForUser(userId: string, clientId: string): Promise<boolean> {
      const ids = await db
        .transaction()
        .execute((t) => revokeGrantsWhere(t, { userId, clientId }, clock.now(), 'user_revoked'))
      metricHooks.revoked?.('grant', ids.length)
      return ids.length > 0
    },
    /** The user's live grants to enabled clients, with the client's name, oldest first. */
    listLiveGrantsOfUser: (userId: string): Promise<LiveGrantSummary[]> => listLiveGrantsOfUser(db, userId),
    /** authorization_code grant: consumes the code and starts a refresh family. Throws OAuthError. */
    redeemAuthorizationCode: (input: CodeRedemption): Promise<IssuedRefreshToken> =>
      redeemAuthorizationCode(db, clock, lifetimes, input, metricHooks),
  }
}

export type GrantService = ReturnType<typeof createGrantService>
