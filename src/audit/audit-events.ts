import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

/**
 * Every kind of audit event. Names are part of the admin API (filters, stored rows): add new ones,
 * never rename.
 */
export const AUDIT_EVENT_TYPES = [
  'sign_in.succeeded',
  'sign_in.failed',
  'sign_in.locked',
  'consent.granted',
  'consent.widened',
  'grant.revoked',
  'code.replayed',
  'refresh_token.reused',
  'client.created',
  'client.updated',
  'client.enabled',
  'client.disabled',
  'client.first_seen',
  'client.document_changed',
  'client.blocked',
  'client.unblocked',
  'client.registered',
  'client.registration_deleted',
  'client.registration_expired',
  'client.standing_changed',
  'resource_server.created',
  'resource_server.updated',
  'resource_server.disabled',
  'resource_server.enabled',
  'resource_server.deleted',
  'resource_server.secret_rotated',
  'signing_key.prepared',
  'signing_key.rotated',
  'signing_key.revoked',
  'signing_key.rekeyed',
  'admin.unauthorized',
  'user.created',
  'user.updated',
  'user.deleted',
  'password.changed',
  'password.reset_link_issued',
  'password.reset',
  'passkey.registered',
  'passkey.renamed',
  'passkey.removed',
  'passkey.refused',
  'passkey.reset',
  'password_sign_in.disabled',
  'password_sign_in.enabled',
] as const

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number]

export const AUDIT_ACTOR_KINDS = [
  'user',
  'client',
  'resource_server',
  'operator',
  'system',
  'anonymous',
] as const
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number]

/**
 * Who did it: a user, a client application, a resource server, the operator (admin API or CLI), the
 * server itself on a schedule (system: the signing-key rotation), or nobody known.
 */
export interface AuditActor {
  kind: AuditActorKind
  id?: string | undefined
}

/** What it was done to, e.g. { kind: 'grant', id } or { kind: 'client', id }. */
export interface AuditTarget {
  kind:
    | 'user'
    | 'client'
    | 'grant'
    | 'refresh_family'
    | 'resource_server'
    | 'signing_key'
    | 'admin_api'
    | 'passkey'
  id?: string | undefined
}

/** Small facts about the event: names, ids, scopes, counts. Never a secret, token, code or password. */
export type AuditDetails = Record<string, string | number | boolean | null | string[]>

/**
 * The HTTP request an event happened in (a FastifyRequest is one): the audit row notes its id (the
 * `reqId` of its log lines), the client's address and user agent. Routes hand it to the service they
 * call, which puts it on the events it records. Passed, not kept in an AsyncLocalStorage: on Node.js
 * before 24 that turns on promise hooks for every request of the process (measured: a tenth more CPU
 * per request and six times the garbage collection on the metadata endpoint).
 */
export interface RequestFacts {
  readonly id: string
  readonly ip: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
}

export interface AuditEvent {
  type: AuditEventType
  actor: AuditActor
  target?: AuditTarget | undefined
  /** The user the event concerns (the user filter and a user's own history read this). */
  userId?: string | undefined
  /** The application the event concerns (the client filter reads this). */
  clientId?: string | undefined
  details?: AuditDetails | undefined
  /** The request it happened in; none for the CLI run directly, housekeeping or the key schedule. */
  from?: RequestFacts | undefined
}

/**
 * What other domains are given to record events. record() runs in the caller's transaction, so the
 * row and the change it records commit or roll back together; recordRefusal() is for what changed
 * nothing (a refused sign-in or admin token): its own insert, which never throws (a failure is
 * logged) so it cannot break the answer.
 */
export interface AuditRecorder {
  record(trx: Kysely<Database>, event: AuditEvent | AuditEvent[]): Promise<void>
  recordRefusal(event: AuditEvent): Promise<void>
}

/** For code built without an audit trail (unit tests of a single service). */
export const NO_AUDIT: AuditRecorder = {
  record: async () => {},
  recordRefusal: async () => {},
}

/** The operator, acting through the admin API (whoever holds ADMIN_TOKEN) or the CLI. */
export const OPERATOR: AuditActor = { kind: 'operator' }

/** The server itself, acting on a schedule it was configured with. */
export const SYSTEM: AuditActor = { kind: 'system' }
