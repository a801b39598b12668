import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { AuditEvent, AuditRecorder, RequestFacts } from '../audit/audit.service.js'
import { redirectUriMatches } from '../clients/redirect-uri.js'
import type { Standing } from '../clients/standing.js'
import { inGivenOrOwnTransaction } from '../db/transaction.js'
import { OAuthError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { newSecret } from '../lib/identifiers.js'
import { isSubset } from '../lib/scopes.js'
import { sha256 } from '../lib/secrets.js'
import {
  type CodeForSession,
  type CodeUnderLiveGrant,
  insertAuthorizationCode,
  insertAuthorizationCodeUnderLiveGrant,
} from './authorization-code.repository.js'
import { findLiveGrant, type Grant, lockEnabledClient, upsertGrant } from './grant.repository.js'

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

/** What issuing codes needs; the grant service builds it once. */
export interface CodeIssuanceDeps {
  db: Kysely<Database>
  clock: Clock
  lifetimes: { authCodeTtl: number }
  audit: AuditRecorder
  /** The returning user's code statement, shared among concurrent authorizations (batchedWrite). */
  insertForSession: (code: CodeForSession) => Promise<string | undefined>
}

/**
 * The audit row of a consent: `consent.granted`, or `consent.widened` when a live grant got more
 * scopes or resources; `extra` adds details (a device request's `device: true`).
 */
export function consentEvent(
  before: Grant | undefined,
  grant: Grant,
  request: { userId: string; clientId: string; from?: RequestFacts | undefined },
  standing: Standing,
  extra: Record<string, unknown> = {},
): AuditEvent {
  const widened =
    before !== undefined &&
    (grant.scopes.length > before.scopes.length || grant.resources.length > before.resources.length)
  return {
    type: widened ? 'consent.widened' : 'consent.granted',
    actor: { kind: 'user', id: request.userId },
    target: { kind: 'grant', id: grant.id },
    userId: request.userId,
    clientId: request.clientId,
    details: {
      scopes: grant.scopes,
      standing,
      ...extra,
      ...(grant.resources.length > 0 ? { resources: grant.resources } : {}),
      ...(before ? { previous_scopes: before.scopes } : {}),
    },
    from: request.from,
  }
}

/** A fresh code for `request`: the plain code, and the row fields (with its hash) to store. */
function newCode(deps: CodeIssuanceDeps, request: Omit<CodeRequest, 'userId'>) {
  const code = newSecret()
  const now = deps.clock.now()
  const fields: Omit<CodeUnderLiveGrant, 'userId'> = {
    codeHash: sha256(code),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    codeChallenge: request.codeChallenge,
    resources: request.resources ?? [],
    dpopJkt: request.dpopJkt ?? null,
    createdAt: now,
    expiresAt: addSeconds(now, deps.lifetimes.authCodeTtl),
  }
  return { code, fields }
}

/** A new code for `request`, written by `insert` only where its conditions hold. */
async function issueUnder(
  deps: CodeIssuanceDeps,
  insert: (fields: Omit<CodeUnderLiveGrant, 'userId'>) => Promise<string | undefined>,
  request: Omit<CodeRequest, 'userId'>,
): Promise<IssuedCode | undefined> {
  const { code, fields } = newCode(deps, request)
  const grantId = await insert(fields)
  return grantId === undefined ? undefined : { code, grantId, expiresAt: fields.expiresAt }
}

/**
 * The user said Allow: creates or widens the (user, client) grant and issues a code bound to it, in
 * one transaction (the caller's `trx` when given, so that more can join it).
 */
export function approveAndIssueCode(
  deps: CodeIssuanceDeps,
  request: CodeRequest,
  trx?: Kysely<Database>,
): Promise<IssuedCode> {
  return inGivenOrOwnTransaction(
    deps.db,
    trx,
    async (t) => {
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
      const grant = await upsertGrant(t, request, deps.clock.now())
      await deps.audit.record(t, consentEvent(before, grant, request, client.standing))
      const { code, fields } = newCode(deps, request)
      await insertAuthorizationCode(t, { ...fields, userId: request.userId, grantId: grant.id })
      return { code, grantId: grant.id, expiresAt: fields.expiresAt }
    },
    { retried: false },
  )
}

/**
 * Remembered consent: issues a code only if the live grant still covers every requested scope and
 * resource, in one statement without a row lock (see insertAuthorizationCodeUnderLiveGrant).
 * Undefined when there is no such grant (the user must be asked).
 */
export function issueCodeUnderLiveGrant(
  deps: CodeIssuanceDeps,
  request: CodeRequest,
  trx?: Kysely<Database>,
): Promise<IssuedCode | undefined> {
  return issueUnder(
    deps,
    (fields) => insertAuthorizationCodeUnderLiveGrant(trx ?? deps.db, { ...fields, userId: request.userId }),
    request,
  )
}

/**
 * A returning user's authorization in one statement: a code when the session whose token hashes to
 * `sessionTokenHash` is live and its user's live grant covers the request, and the client is enabled
 * with this exact redirect_uri and these scopes (see insertAuthorizationCodesForSessions). Undefined
 * when any of that does not hold; nothing is written then.
 */
export function issueCodeForSession(
  deps: CodeIssuanceDeps,
  request: Omit<CodeRequest, 'userId'>,
  sessionTokenHash: string,
): Promise<IssuedCode | undefined> {
  return issueUnder(deps, (fields) => deps.insertForSession({ ...fields, sessionTokenHash }), request)
}
