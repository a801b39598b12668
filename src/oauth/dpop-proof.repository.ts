import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { prepareStatement } from '../db/prepared-statement.js'

const rememberStatement = prepareStatement(
  (_db, p: { keyHash: string; expiresAt: Date; now: Date }) => sql<{ key_hash: string }>`
    insert into dpop_proof_jtis (key_hash, expires_at) values (${p.keyHash}, ${p.expiresAt})
    on conflict (key_hash) do update set expires_at = excluded.expires_at
      where dpop_proof_jtis.expires_at <= ${p.now}
    returning key_hash`,
)

/**
 * Records a DPoP proof as seen until `expiresAt`, in one statement: true when it was not seen before
 * (or only by a row that had expired and housekeeping had not deleted yet). The primary key makes it
 * atomic: of concurrent uses of one proof, on any instance, exactly one gets true.
 */
export async function rememberDpopProof(
  db: Kysely<Database>,
  keyHash: string,
  expiresAt: Date,
  now: Date,
): Promise<boolean> {
  const rows = await rememberStatement.execute(db, { keyHash, expiresAt, now })
  return rows.length > 0
}
