import type { Kysely } from 'kysely'
import type { Database, Row } from '../db/database.js'

export interface User {
  id: string
  email: string
  createdAt: Date
}

function toUser(row: Pick<Row<'users'>, 'id' | 'email' | 'created_at'>): User {
  return { id: row.id, email: row.email, createdAt: row.created_at }
}

export async function insertUser(db: Kysely<Database>, email: string, passwordHash: string): Promise<User> {
  const row = await db
    .insertInto('users')
    .values({ email, password_hash: passwordHash })
    .returning(['id', 'email', 'created_at'])
    .executeTakeFirstOrThrow()
  return toUser(row)
}

export async function findUserById(db: Kysely<Database>, id: string): Promise<User | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'email', 'created_at'])
    .where('id', '=', id)
    .executeTakeFirst()
  return row && toUser(row)
}

/** Case-insensitive lookup, with the password hash for sign-in. */
export async function findUserCredentialsByEmail(
  db: Kysely<Database>,
  email: string,
): Promise<(User & { passwordHash: string }) | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'email', 'created_at', 'password_hash'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst()
  return row && { ...toUser(row), passwordHash: row.password_hash }
}

export async function listUsers(db: Kysely<Database>): Promise<User[]> {
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email', 'created_at'])
    .orderBy('created_at')
    .execute()
  return rows.map(toUser)
}

/** Deletes a user; sessions, grants, codes and refresh families go with it (ON DELETE CASCADE). */
export async function deleteUser(db: Kysely<Database>, id: string): Promise<boolean> {
  const rows = await db.deleteFrom('users').where('id', '=', id).returning('id').execute()
  return rows.length > 0
}
