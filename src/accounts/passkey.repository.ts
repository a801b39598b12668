import type { Kysely } from 'kysely'
import type { Database, Row } from '../db/database.js'

/** A registered passkey as the account pages and the admin API show it (no key material). */
export interface Passkey {
  id: string
  userId: string
  name: string
  backupEligible: boolean
  backedUp: boolean
  createdAt: Date
  lastUsedAt: Date | null
}

/** What an assertion is checked against. */
export interface PasskeyCredential extends Passkey {
  credentialId: string
  publicKey: Uint8Array
  signCount: number
  transports: string[]
}

const SHOWN = ['id', 'user_id', 'name', 'backup_eligible', 'backed_up', 'created_at', 'last_used_at'] as const

function toPasskey(row: Pick<Row<'passkeys'>, (typeof SHOWN)[number]>): Passkey {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    backupEligible: row.backup_eligible,
    backedUp: row.backed_up,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  }
}

export async function insertPasskey(
  db: Kysely<Database>,
  passkey: {
    userId: string
    credentialId: string
    publicKey: Uint8Array
    signCount: number
    transports: string[]
    backupEligible: boolean
    backedUp: boolean
    name: string
    createdAt: Date
  },
): Promise<Passkey> {
  const row = await db
    .insertInto('passkeys')
    .values({
      user_id: passkey.userId,
      credential_id: passkey.credentialId,
      public_key: passkey.publicKey,
      sign_count: passkey.signCount,
      transports: passkey.transports,
      backup_eligible: passkey.backupEligible,
      backed_up: passkey.backedUp,
      name: passkey.name,
      created_at: passkey.createdAt,
    })
    .returning(SHOWN)
    .executeTakeFirstOrThrow()
  return toPasskey(row)
}

/** A user's passkeys, oldest first. */
export async function listPasskeys(db: Kysely<Database>, userId: string): Promise<Passkey[]> {
  const rows = await db
    .selectFrom('passkeys')
    .select(SHOWN)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(toPasskey)
}

/** Credential IDs and transports of a user's passkeys (excludeCredentials, allowCredentials). */
export async function listCredentialIds(
  db: Kysely<Database>,
  userId: string,
): Promise<{ credentialId: string; transports: string[] }[]> {
  const rows = await db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports'])
    .where('user_id', '=', userId)
    .execute()
  return rows.map((r) => ({ credentialId: r.credential_id, transports: r.transports }))
}

export async function findPasskeyByCredentialId(
  db: Kysely<Database>,
  credentialId: string,
): Promise<PasskeyCredential | undefined> {
  const row = await db
    .selectFrom('passkeys')
    .select([...SHOWN, 'credential_id', 'public_key', 'sign_count', 'transports'])
    .where('credential_id', '=', credentialId)
    .executeTakeFirst()
  return (
    row && {
      ...toPasskey(row),
      credentialId: row.credential_id,
      publicKey: row.public_key,
      signCount: Number(row.sign_count),
      transports: row.transports,
    }
  )
}

/**
 * Records a use: the new counter and backup state, if the counter is still what the assertion was
 * checked against (of two assertions checked at once, only one moves it). False when it had moved.
 */
export async function recordPasskeyUse(
  db: Kysely<Database>,
  id: string,
  use: { checkedSignCount: number; signCount: number; backedUp: boolean; at: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ sign_count: use.signCount, backed_up: use.backedUp, last_used_at: use.at })
    .where('id', '=', id)
    .where('sign_count', '=', use.checkedSignCount)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export async function renamePasskey(
  db: Kysely<Database>,
  userId: string,
  id: string,
  name: string,
): Promise<Passkey | undefined> {
  const row = await db
    .updateTable('passkeys')
    .set({ name })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning(SHOWN)
    .executeTakeFirst()
  return row && toPasskey(row)
}

/** Deletes one passkey of the user; undefined when the user has no passkey with this id. */
export async function deletePasskey(
  db: Kysely<Database>,
  userId: string,
  id: string,
): Promise<Passkey | undefined> {
  const row = await db
    .deleteFrom('passkeys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning(SHOWN)
    .executeTakeFirst()
  return row && toPasskey(row)
}

export async function countPasskeys(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
