import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Codes and refresh families reference their grant with ONE composite foreign key, (grant_id,
 * user_id, client_id) → grants, instead of three (to the grant, the user and the client).
 *
 * Every foreign key checked on insert locks its parent row FOR KEY SHARE. With three keys, every code
 * and every family locked its client's row too, and one popular client's row was locked by every
 * authorization and every code exchange of all its users at once: PostgreSQL then builds a new
 * MultiXact for each locker, which cost more CPU than the inserts themselves under load. With one
 * key only the grant's row is locked (one user's). Nothing is lost: deleting a user or a client still
 * removes their codes and families (through their grants, ON DELETE CASCADE), and the database now
 * also guarantees that a code's or a family's user and client are its grant's.
 */
const CHILDREN = ['authorization_codes', 'refresh_families'] as const

export async function up(db: Kysely<any>): Promise<void> {
  // Checking the new keys reads every code and family: on a large database that outlasts the pool's
  // 10 s statement timeout, which would fail the upgrade. It holds for this transaction only.
  await sql`set local statement_timeout = 0`.execute(db)
  await sql`alter table grants add constraint grants_id_user_client_key unique (id, user_id, client_id)`.execute(
    db,
  )
  for (const table of CHILDREN) {
    await sql`alter table ${sql.id(table)}
      drop constraint ${sql.id(`${table}_grant_id_fkey`)},
      drop constraint ${sql.id(`${table}_user_id_fkey`)},
      drop constraint ${sql.id(`${table}_client_id_fkey`)},
      add constraint ${sql.id(`${table}_grant_fkey`)} foreign key (grant_id, user_id, client_id)
        references grants (id, user_id, client_id) on delete cascade`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of CHILDREN) {
    await sql`alter table ${sql.id(table)}
      drop constraint ${sql.id(`${table}_grant_fkey`)},
      add constraint ${sql.id(`${table}_grant_id_fkey`)} foreign key (grant_id) references grants (id) on delete cascade,
      add constraint ${sql.id(`${table}_user_id_fkey`)} foreign key (user_id) references users (id) on delete cascade,
      add constraint ${sql.id(`${table}_client_id_fkey`)} foreign key (client_id) references clients (id) on delete cascade`.execute(
      db,
    )
  }
  await sql`alter table grants drop constraint grants_id_user_client_key`.execute(db)
}
