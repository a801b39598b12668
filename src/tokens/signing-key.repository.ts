import { type Kysely, sql } from 'kysely'
import { ADVISORY_LOCKS, inAdvisoryLock } from '../db/advisory-lock.js'
import type { Database, Row } from '../db/database.js'

/** The channel the signing_keys trigger of migration 0010 notifies at every change of the table. */
export const SIGNING_KEYS_CHANNEL = 'linkauth_signing_keys'

export interface StoredSigningKey {
  kid: string
  alg: string
  publicJwk: Record<string, unknown>
  privateKeyEncrypted: string
  /** Which key-encryption key encrypted it (its id); null for rows from before migration 0010. */
  kekId: string | null
  createdAt: Date
  /** When it stopped signing; null for the active key (and for a pending key, see `pending`). */
  retiredAt: Date | null
  /** Made ahead by the rotation schedule: published, signing from `activatesAt`. */
  pending: boolean
  /** When it signs (pending) or signed first; rows from before migration 0010: created_at. */
  activatesAt: Date
  revokedAt: Date | null
}

export type SigningKeyInfo = Omit<StoredSigningKey, 'privateKeyEncrypted'>

/**
 * A pending row carries retired_at = activates_at for versions before migration 0010 (see there);
 * here a pending key has no retirement.
 */
function toSigningKeyInfo(row: Omit<Row<'signing_keys'>, 'private_key_encrypted'>): SigningKeyInfo {
  return {
    kid: row.kid,
    alg: row.alg,
    publicJwk: row.public_jwk,
    kekId: row.kek_id,
    createdAt: row.created_at,
    retiredAt: row.pending ? null : row.retired_at,
    pending: row.pending,
    activatesAt: row.activates_at ?? row.created_at,
    revokedAt: row.revoked_at,
  }
}

function toStoredSigningKey(row: Row<'signing_keys'>): StoredSigningKey {
  return { ...toSigningKeyInfo(row), privateKeyEncrypted: row.private_key_encrypted }
}

const PUBLIC_COLUMNS = [
  'kid',
  'alg',
  'public_jwk',
  'kek_id',
  'created_at',
  'retired_at',
  'pending',
  'activates_at',
  'revoked_at',
] as const

/**
 * Runs `work` in a transaction holding the signing-key lock: every change of which key signs (the
 * schedule, a rotation, a revocation) takes it, so they happen one after another on any number of
 * instances. `wait: false`: undefined, nothing done, when another instance holds it.
 */
export function inSigningKeyLock<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
  options: { wait: boolean },
): Promise<T | undefined> {
  return inAdvisoryLock(db, ADVISORY_LOCKS.signingKeys, work, options)
}

type NewSigningKey = Pick<
  StoredSigningKey,
  'kid' | 'alg' | 'publicJwk' | 'privateKeyEncrypted' | 'kekId' | 'createdAt'
>

/** A new key's columns, active from `activatesAt`; `pending` keys wait, published, until then. */
function signingKeyRow(key: NewSigningKey, activatesAt: Date, pending: boolean) {
  return {
    kid: key.kid,
    alg: key.alg,
    public_jwk: JSON.stringify(key.publicJwk),
    private_key_encrypted: key.privateKeyEncrypted,
    kek_id: key.kekId,
    created_at: key.createdAt,
    activates_at: activatesAt,
    // See migration 0010 for a pending key's retired_at.
    ...(pending ? { pending: true, retired_at: activatesAt } : {}),
  }
}

/** Inserts a key as the active one; the partial unique index refuses it while another is active. */
export async function insertSigningKey(db: Kysely<Database>, key: NewSigningKey): Promise<void> {
  await db
    .insertInto('signing_keys')
    .values(signingKeyRow(key, key.createdAt, false))
    .execute()
}

/** Inserts a key that waits, published, until `activatesAt` (see migration 0010 for its retired_at). */
export async function insertPendingSigningKey(
  db: Kysely<Database>,
  key: NewSigningKey,
  activatesAt: Date,
): Promise<void> {
  await db
    .insertInto('signing_keys')
    .values(signingKeyRow(key, activatesAt, true))
    .execute()
}

export async function findActiveSigningKey(db: Kysely<Database>): Promise<StoredSigningKey | undefined> {
  const row = await db
    .selectFrom('signing_keys')
    .selectAll()
    .where('retired_at', 'is', null)
    .executeTakeFirst()
  return row && toStoredSigningKey(row)
}

/** The key waiting to sign next (the first, should there ever be two). */
export async function findPendingSigningKey(db: Kysely<Database>): Promise<StoredSigningKey | undefined> {
  const row = await db
    .selectFrom('signing_keys')
    .selectAll()
    .where('pending', '=', true)
    .where('revoked_at', 'is', null)
    .orderBy('activates_at')
    .orderBy('kid')
    .executeTakeFirst()
  return row && toStoredSigningKey(row)
}

export async function findSigningKey(db: Kysely<Database>, kid: string): Promise<SigningKeyInfo | undefined> {
  const row = await db
    .selectFrom('signing_keys')
    .select(PUBLIC_COLUMNS)
    .where('kid', '=', kid)
    .executeTakeFirst()
  return row && toSigningKeyInfo(row)
}

/**
 * The poll every instance runs every few seconds: which key is active, which waits, which are revoked,
 * as one string that changes whenever any of them does. Reads the few rows concerned only.
 */
export async function findSigningKeyState(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ state: string | null }>`
    select string_agg(kid || ':' || (case when revoked_at is not null then 'revoked'
                                          when pending then 'pending' else 'active' end), ',' order by kid) as state
      from signing_keys
     where retired_at is null or pending or revoked_at is not null`.execute(db)
  return rows[0]?.state ?? ''
}

/** Retires the active key; returns its kid, or undefined when none was active. */
export async function retireActiveSigningKey(db: Kysely<Database>, now: Date): Promise<string | undefined> {
  const row = await db
    .updateTable('signing_keys')
    .set({ retired_at: now })
    .where('retired_at', 'is', null)
    .returning('kid')
    .executeTakeFirst()
  return row?.kid
}

/** A pending key becomes the active one (the active one must be retired first, same transaction). */
export async function activatePendingSigningKey(
  db: Kysely<Database>,
  kid: string,
  activatesAt: Date,
): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ pending: false, retired_at: null, activates_at: activatesAt })
    .where('kid', '=', kid)
    .where('pending', '=', true)
    .execute()
}

/** Pending keys dropped (a rotation by hand supersedes the schedule): retired now, never having signed. */
export async function retirePendingSigningKeys(db: Kysely<Database>, now: Date): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ pending: false, retired_at: now })
    .where('pending', '=', true)
    .execute()
}

/**
 * Revokes a key that is not the active one (retire the active one first). The trigger of migration
 * 0010 records the key-revoked event in the same transaction.
 */
export async function revokeSigningKey(
  db: Kysely<Database>,
  kid: string,
  now: Date,
): Promise<SigningKeyInfo | undefined> {
  const row = await db
    .updateTable('signing_keys')
    .set({
      revoked_at: now,
      pending: false,
      retired_at: sql<Date>`case when pending or retired_at > ${now} then ${now} else retired_at end`,
    })
    .where('kid', '=', kid)
    .where('retired_at', 'is not', null)
    .where('revoked_at', 'is', null)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst()
  return row && toSigningKeyInfo(row)
}

export async function listSigningKeys(db: Kysely<Database>): Promise<SigningKeyInfo[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .select(PUBLIC_COLUMNS)
    .orderBy('created_at', 'desc')
    .orderBy('kid')
    .execute()
  return rows.map(toSigningKeyInfo)
}

/**
 * The keys in the JWKS: the active one, the pending one, and those retired after `retiredAfter`
 * (whose tokens may still be alive); never a revoked one.
 */
export async function listPublishedSigningKeys(
  db: Kysely<Database>,
  retiredAfter: Date,
): Promise<SigningKeyInfo[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .select(PUBLIC_COLUMNS)
    .where('revoked_at', 'is', null)
    .where((eb) =>
      eb.or([eb('retired_at', 'is', null), eb('pending', '=', true), eb('retired_at', '>', retiredAfter)]),
    )
    .orderBy('created_at', 'desc')
    .orderBy('kid')
    .execute()
  return rows.map(toSigningKeyInfo)
}

/**
 * One key tokens may be signed with, by kid: active, pending and due at `now` (another instance may
 * sign with it before the schedule has recorded the switch), or retired after `retiredAfter`; never
 * revoked. A primary-key lookup.
 */
export async function findVerificationSigningKey(
  db: Kysely<Database>,
  kid: string,
  retiredAfter: Date,
  now: Date,
): Promise<SigningKeyInfo | undefined> {
  const row = await db
    .selectFrom('signing_keys')
    .select(PUBLIC_COLUMNS)
    .where('kid', '=', kid)
    .where('revoked_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('retired_at', 'is', null),
        eb.and([eb('pending', '=', true), eb('activates_at', '<=', now)]),
        eb.and([eb('pending', '=', false), eb('retired_at', '>', retiredAfter)]),
      ]),
    )
    .executeTakeFirst()
  return row && toSigningKeyInfo(row)
}

/** Every key's kid with the id of the key-encryption key its private half is under. */
export async function listKeyEncryptionIds(
  db: Kysely<Database>,
): Promise<{ kid: string; kekId: string | null; needed: boolean }[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .select(['kid', 'kek_id', 'retired_at', 'pending'])
    .orderBy('created_at')
    .execute()
  return rows.map((r) => ({ kid: r.kid, kekId: r.kek_id, needed: r.retired_at === null || r.pending }))
}

/** One key's ciphertext, its row locked until the transaction ends (one re-encryption at a time). */
export async function findEncryptedKeyForUpdate(
  db: Kysely<Database>,
  kid: string,
): Promise<{ kid: string; privateKeyEncrypted: string; kekId: string | null } | undefined> {
  const row = await db
    .selectFrom('signing_keys')
    .select(['kid', 'private_key_encrypted', 'kek_id'])
    .where('kid', '=', kid)
    .forUpdate()
    .executeTakeFirst()
  return row && { kid: row.kid, privateKeyEncrypted: row.private_key_encrypted, kekId: row.kek_id }
}

export async function updateEncryptedKey(
  db: Kysely<Database>,
  kid: string,
  privateKeyEncrypted: string,
  kekId: string,
): Promise<void> {
  await db
    .updateTable('signing_keys')
    .set({ private_key_encrypted: privateKeyEncrypted, kek_id: kekId })
    .where('kid', '=', kid)
    .execute()
}

/** The private halves the server may need to sign with: the active key and a pending one. */
export async function listSigningCandidates(db: Kysely<Database>): Promise<StoredSigningKey[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .selectAll()
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('pending', '=', true)]))
    .execute()
  return rows.map(toStoredSigningKey)
}
