import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { RawQuery } from './authorize-request.js'

/** The authorization parameters a client pushed (RFC 9126 §2.1), as validated at the PAR endpoint. */
export type PushedParameters = Record<string, string | string[]>

export async function insertPushedRequest(
  db: Kysely<Database>,
  row: {
    handleHash: string
    clientId: string
    parameters: PushedParameters
    createdAt: Date
    expiresAt: Date
  },
): Promise<void> {
  await db
    .insertInto('pushed_authorization_requests')
    .values({
      handle_hash: row.handleHash,
      client_id: row.clientId,
      parameters: JSON.stringify(row.parameters),
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute()
}

/**
 * Spends a pushed request in one statement (RFC 9126 §4: single use): deletes and returns its
 * parameters when the handle is known, belongs to this client and has not expired. Of concurrent
 * uses, exactly one gets them. Another client's or an expired request stays for housekeeping.
 */
export async function takePushedRequest(
  db: Kysely<Database>,
  handleHash: string,
  clientId: string,
  now: Date,
): Promise<RawQuery | undefined> {
  const row = await db
    .deleteFrom('pushed_authorization_requests')
    .where('handle_hash', '=', handleHash)
    .where('client_id', '=', clientId)
    .where('expires_at', '>', now)
    .returning('parameters')
    .executeTakeFirst()
  return row?.parameters
}
