import { type Kysely, sql } from 'kysely'
import type { Database, DeviceAuthorizationStatus, Row } from '../db/database.js'
import { prepareStatement } from '../db/prepared-statement.js'
import { DEVICE_CODE_GRANT_TYPE } from '../clients/grant-types.js'
import { type Standing, standingOf } from '../clients/standing.js'
import type { ClientKind, StandingOverride } from '../db/database.js'
import { servingResourcesOf } from '../grants/serving-resources.js'

/** A device authorization request (RFC 8628 §3.1) as the /device page and the consent see it. */
export interface DeviceAuthorization {
  id: string
  clientId: string
  scopes: string[]
  resources: string[]
  status: DeviceAuthorizationStatus
  expiresAt: Date
}

const toDeviceAuthorization = (row: Row<'device_authorizations'>): DeviceAuthorization => ({
  id: row.id,
  clientId: row.client_id,
  scopes: row.scopes,
  resources: row.resources,
  status: row.status,
  expiresAt: row.expires_at,
})

export async function insertDeviceAuthorization(
  db: Kysely<Database>,
  row: {
    id: string
    deviceCodeHash: string
    userCodeHash: string
    clientId: string
    scopes: string[]
    resources: string[]
    intervalSeconds: number
    createdAt: Date
    expiresAt: Date
  },
): Promise<void> {
  await db
    .insertInto('device_authorizations')
    .values({
      id: row.id,
      device_code_hash: row.deviceCodeHash,
      user_code_hash: row.userCodeHash,
      client_id: row.clientId,
      scopes: row.scopes,
      resources: row.resources,
      interval_seconds: row.intervalSeconds,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute()
}

/**
 * The unexpired, unanswered request with this id, or whose user code hashes to this (one index
 * lookup either way: both columns are unique).
 */
export async function findOpenDeviceAuthorization(
  db: Kysely<Database>,
  by: { id: string } | { userCodeHash: string },
  now: Date,
): Promise<DeviceAuthorization | undefined> {
  const row = await db
    .selectFrom('device_authorizations')
    .selectAll()
    .$call((q) => ('id' in by ? q.where('id', '=', by.id) : q.where('user_code_hash', '=', by.userCodeHash)))
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return row && toDeviceAuthorization(row)
}

/**
 * Records the person's answer on a request still open (pending, unexpired): approved under `grantId`,
 * or denied. False when it was answered meanwhile or expired (each request is answered once).
 */
export async function answerDeviceAuthorization(
  db: Kysely<Database>,
  answer: { id: string; userId: string; grantId: string | null; status: 'approved' | 'denied'; now: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('device_authorizations')
    .set({ status: answer.status, user_id: answer.userId, grant_id: answer.grantId })
    .where('id', '=', answer.id)
    .where('status', '=', 'pending')
    .where('expires_at', '>', answer.now)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

export interface DevicePollValues {
  deviceCodeHash: string
  clientId: string
  dpopJkt: string | null
  familyId: string
  tokenHash: string
  now: Date
  familyExpiresAt: Date
  tokenExpiresAt: Date
}

/** What one poll found (RFC 8628 §3.5), decided by the poll statement itself. */
export type DevicePollOutcome =
  | 'unknown'
  | 'other_client'
  | 'client_disabled'
  | 'grant_type_not_allowed'
  | 'used'
  | 'expired'
  | 'dpop_required'
  | 'slow_down'
  | 'pending'
  | 'denied'
  | 'scope_not_allowed'
  | 'grant_revoked'
  | 'issue'

export interface DevicePollRow {
  outcome: DevicePollOutcome
  /** The interval the device must keep from now on (after a slow_down, 5 s longer). */
  intervalSeconds?: number
  /** Set when tokens were issued: the new family and what it holds. */
  issue?: {
    familyId: string
    grantId: string
    userId: string
    clientId: string
    scopes: string[]
    resources: string[]
    servingResources: string[] | undefined
    /** The app's standing now (clients/standing.ts), carried by its access tokens. */
    clientStanding: Standing
  }
}

/**
 * One poll of the token endpoint in ONE statement, one index lookup (device_code_hash): the row is
 * locked (FOR UPDATE), so concurrent polls of one device code queue on it and each sees what the one
 * before it wrote. The outcome is decided in SQL, in RFC 8628's order; a poll that reaches the
 * request notes its time (the interval is enforced against it; a poll too soon adds 5 s to the
 * interval, §3.5 slow_down); the poll that finds it approved records the new refresh family on the
 * row (so a later poll finds it used: single use) and starts the family and its first refresh token
 * while the grant, share-locked, is still live (as the code exchange does).
 */
const pollStatement = prepareStatement(
  (_db, v: DevicePollValues) =>
    sql<{
      outcome: DevicePollOutcome
      interval_seconds: number
      user_id: string | null
      grant_id: string | null
      client_id: string
      scopes: string[]
      resources: string[]
      issued_family_id: string | null
      serving_resources: string[] | null
      client_kind: ClientKind | null
      standing_override: StandingOverride | null
    }>`
    with d as (
      select d.id, d.client_id, d.status, d.last_polled_at, d.interval_seconds, d.expires_at, d.user_id,
             d.grant_id, d.scopes, d.resources, d.family_id, c.id as active_client_id, c.scopes as client_scopes,
             c.require_dpop, c.grant_types, c.kind as client_kind, c.standing_override
        from device_authorizations as d
        left join clients as c on c.id = d.client_id and c.disabled_at is null
       where d.device_code_hash = ${v.deviceCodeHash}
         for update of d
    ), o as (
      select d.*, case
               when d.client_id <> ${v.clientId} then 'other_client'
               when d.active_client_id is null then 'client_disabled'
               when not (${DEVICE_CODE_GRANT_TYPE} = any(d.grant_types)) then 'grant_type_not_allowed'
               when d.family_id is not null then 'used'
               when d.expires_at <= ${v.now}::timestamptz then 'expired'
               when d.require_dpop and ${v.dpopJkt}::text is null then 'dpop_required'
               when d.last_polled_at is not null
                    and d.last_polled_at + make_interval(secs => d.interval_seconds) > ${v.now}::timestamptz
                 then 'slow_down'
               when d.status = 'pending' then 'pending'
               when d.status = 'denied' then 'denied'
               when not (d.scopes <@ d.client_scopes) then 'scope_not_allowed'
               else 'issue'
             end as outcome
        from d
    ), polled as (
      update device_authorizations as t
         set last_polled_at = ${v.now}::timestamptz,
             interval_seconds = least(t.interval_seconds + case when o.outcome = 'slow_down' then 5 else 0 end, 3600),
             family_id = case when o.outcome = 'issue' then ${v.familyId}::uuid else t.family_id end
        from o
       where t.id = o.id and o.outcome in ('slow_down', 'pending', 'denied', 'issue')
      returning t.interval_seconds
    ), family as (
      insert into refresh_families (id, grant_id, client_id, user_id, scopes, resources, created_at, expires_at,
                                    dpop_jkt)
      select ${v.familyId}::uuid, o.grant_id, o.client_id, o.user_id, o.scopes, o.resources, ${v.now}::timestamptz,
             ${v.familyExpiresAt}::timestamptz, ${v.dpopJkt}::text
        from o join grants as g on g.id = o.grant_id
       where o.outcome = 'issue' and g.revoked_at is null
         for share of g
      returning id
    ), first_token as (
      insert into refresh_tokens (token_hash, family_id, scopes, created_at, expires_at)
      select ${v.tokenHash}, family.id, o.scopes, ${v.now}::timestamptz,
             least(${v.tokenExpiresAt}::timestamptz, ${v.familyExpiresAt}::timestamptz)
        from family cross join o
      returning family_id
    )
    select o.outcome, coalesce((select interval_seconds from polled), o.interval_seconds) as interval_seconds,
           o.user_id, o.grant_id, o.client_id, o.scopes, o.resources, o.client_kind, o.standing_override,
           (select family_id from first_token) as issued_family_id,
           case when o.outcome = 'issue' and cardinality(o.resources) = 0
                then ${servingResourcesOf(sql`o.scopes`)}
           end as serving_resources
      from o
  `,
)

export async function pollDeviceAuthorization(
  db: Kysely<Database>,
  values: DevicePollValues,
): Promise<DevicePollRow> {
  const [row] = await pollStatement.execute(db, values)
  if (!row) return { outcome: 'unknown' }
  if (row.outcome !== 'issue') return { outcome: row.outcome, intervalSeconds: row.interval_seconds }
  // Approved, but the grant was revoked before the family could start: the code is spent all the same.
  if (!row.issued_family_id) return { outcome: 'grant_revoked' }
  return {
    outcome: 'issue',
    intervalSeconds: row.interval_seconds,
    issue: {
      familyId: row.issued_family_id,
      grantId: row.grant_id!,
      userId: row.user_id!,
      clientId: row.client_id,
      scopes: row.scopes,
      resources: row.resources,
      servingResources: row.serving_resources ?? undefined,
      clientStanding: standingOf({ kind: row.client_kind!, standingOverride: row.standing_override }),
    },
  }
}
