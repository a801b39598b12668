import type { Kysely } from 'kysely'
import type { Database, Row } from '../db/database.js'

export interface StoredSigningKey {
  kid: string
  alg: string
  publicJwk: Record<string, unknown>
  privateKeyEncrypted: string
  createdAt: Date
  retiredAt: Date | null
}

export type SigningKeyInfo = Omit<StoredSigningKey, 'privateKeyEncrypted'>

function toStoredSigningKey(row: Row<'signing_keys'>): StoredSigningKey {
  return {
    kid: row.kid,
    alg: row.alg,
    publicJwk: row.public_jwk,
    privateKeyEncrypted: row.private_key_encrypted,
    createdAt: row.created_at,
    retiredAt: row.retired_at,
  }
}

const PUBLIC_COLUMNS = ['kid', 'alg', 'public_jwk', 'created_at', 'retired_at'] as const

function toSigningKeyInfo(row: Pick<Row<'signing_keys'>, (typeof PUBLIC_COLUMNS)[number]>): SigningKeyInfo {
  return {
    kid: row.kid,
    alg: row.alg,
    publicJwk: row.public_jwk,
    createdAt: row.created_at,
    retiredAt: row.retired_at,
  }
}

/** Inserts a key as the active one; the partial unique index refuses it while another is active. */
export async function insertSigningKey(
  db: Kysely<Database>,
  key: Omit<StoredSigningKey, 'retiredAt'>,
): Promise<void> {
  await db
    .insertInto('signing_keys')
    .values({
      kid: key.kid,
      alg: key.alg,
      public_jwk: JSON.stringify(key.publicJwk),
      private_key_encrypted: key.privateKeyEncrypted,
      created_at: key.createdAt,
    })
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

/** The poll every instance runs every few seconds: one index-only lookup of the active kid. */
export async function findActiveKid(db: Kysely<Database>): Promise<string | undefined> {
  const row = await db
    .selectFrom('signing_keys')
    .select('kid')
    .where('retired_at', 'is', null)
    .executeTakeFirst()
  return row?.kid
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

export async function listSigningKeys(db: Kysely<Database>): Promise<SigningKeyInfo[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .select(PUBLIC_COLUMNS)
    .orderBy('created_at', 'desc')
    .orderBy('kid')
    .execute()
  return rows.map(toSigningKeyInfo)
}

/** The active key and the keys retired after `retiredAfter`: the ones whose tokens may still be alive. */
export async function listPublishedSigningKeys(
  db: Kysely<Database>,
  retiredAfter: Date,
): Promise<SigningKeyInfo[]> {
  const rows = await db
    .selectFrom('signing_keys')
    .select(PUBLIC_COLUMNS)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredAfter)]))
    .orderBy('created_at', 'desc')
    .orderBy('kid')
    .execute()
  return rows.map(toSigningKeyInfo)
}

/** One published key by kid (active, or retired after `retiredAfter`): a primary-key lookup. */
export async function findPublishedSigningKey(
  db: Kysely<Database>,
  kid: string,
  retiredAfter: Date,
): Promise<SigningKeyInfo | undefined> {
  const row = await db
    .selectFrom('signing_keys')
    .select(PUBLIC_COLUMNS)
    .where('kid', '=', kid)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredAfter)]))
    .executeTakeFirst()
  return row && toSigningKeyInfo(row)
}
