import { type Kysely, sql } from 'kysely'
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
): Promise<(User & { passwordHash: string; passwordSignIn: boolean }) | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'email', 'created_at', 'password_hash', 'password_sign_in'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst()
  return row && { ...toUser(row), passwordHash: row.password_hash, passwordSignIn: row.password_sign_in }
}

/** Whether the user signs in with a password too (false: passkeys only); undefined: no such user. */
export async function findPasswordSignIn(db: Kysely<Database>, userId: string): Promise<boolean | undefined> {
  const row = await db
    .selectFrom('users')
    .select('password_sign_in')
    .where('id', '=', userId)
    .executeTakeFirst()
  return row?.password_sign_in
}

/**
 * Locks the user's row (select … for update) and answers whether password sign-in is on: what
 * removes a way to sign in takes this lock first, so two such changes run one after the other and
 * the second counts what the first left (READ COMMITTED alone lets both see the other's row).
 */
export async function lockPasswordSignIn(
  trx: Kysely<Database>,
  userId: string,
): Promise<boolean | undefined> {
  const row = await trx
    .selectFrom('users')
    .select('password_sign_in')
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirst()
  return row?.password_sign_in
}

/** Turns password sign-in on or off; false when no user has this id. */
export async function setPasswordSignIn(db: Kysely<Database>, userId: string, on: boolean): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_sign_in: on })
    .where('id', '=', userId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
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

export async function findPasswordHash(db: Kysely<Database>, userId: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst()
  return row?.password_hash
}

/** LIKE pattern characters in a search string match only themselves. */
const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

export interface UserQuery {
  /** Case-insensitive prefix of the email (through users_email_prefix_idx). */
  emailPrefix?: string | undefined
  /** Case-insensitive part of the email anywhere (reads users in order until the page is full). */
  emailContains?: string | undefined
  /** Users after this (created_at, id) position: the cursor (created_at as PostgreSQL prints it, to the microsecond). */
  after?: { createdAt: string; id: string } | undefined
  limit: number
}

/** Users oldest first by (created_at, id), one page at a time; `position` is each one's cursor value. */
export async function listUsersPage(
  db: Kysely<Database>,
  q: UserQuery,
): Promise<(User & { position: string })[]> {
  let query = db
    .selectFrom('users')
    .select(['id', 'email', 'created_at', sql<string>`created_at::text`.as('position')])
  if (q.emailPrefix !== undefined)
    query = query.where(sql<boolean>`lower(email) like ${`${likeEscaped(q.emailPrefix.toLowerCase())}%`}`)
  if (q.emailContains !== undefined)
    query = query.where(sql<boolean>`lower(email) like ${`%${likeEscaped(q.emailContains.toLowerCase())}%`}`)
  if (q.after !== undefined)
    query = query.where(
      sql<boolean>`(created_at, id) > (${q.after.createdAt}::timestamptz, ${q.after.id}::uuid)`,
    )
  const rows = await query.orderBy('created_at').orderBy('id').limit(q.limit).execute()
  return rows.map((row) => ({ ...toUser(row), position: row.position }))
}

/** Changes a user's email; undefined when no user has this id. A taken email fails (unique index). */
export async function updateUserEmail(
  db: Kysely<Database>,
  id: string,
  email: string,
): Promise<User | undefined> {
  const row = await db
    .updateTable('users')
    .set({ email })
    .where('id', '=', id)
    .returning(['id', 'email', 'created_at'])
    .executeTakeFirst()
  return row && toUser(row)
}

/**
 * Sets a user's password hash and ends their sign-in sessions, all but `keepSessionId` when given.
 * Call inside a transaction. False when no user has this id.
 */
export async function setPasswordHash(
  db: Kysely<Database>,
  userId: string,
  passwordHash: string,
  keepSessionId?: string,
): Promise<{ updated: boolean; sessionsEnded: number }> {
  const updated = await db
    .updateTable('users')
    .set({ password_hash: passwordHash })
    .where('id', '=', userId)
    .returning('id')
    .executeTakeFirst()
  if (!updated) return { updated: false, sessionsEnded: 0 }
  let sessions = db.deleteFrom('sign_in_sessions').where('user_id', '=', userId)
  if (keepSessionId !== undefined) sessions = sessions.where('id', '!=', keepSessionId)
  const ended = await sessions.executeTakeFirst()
  return { updated: true, sessionsEnded: Number(ended.numDeletedRows) }
}
