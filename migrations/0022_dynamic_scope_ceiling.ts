import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Dynamic registrations made before 0020 step up within the operator's policy, as those made since
 * do (issue 37 part 4; docs/design.md §4, "Scopes"). 0020 kept their registered `scope` as both
 * their default and their ceiling (`scopes`), so such an agent asking for more after a `403
 * insufficient_scope` was refused where one registered since is asked the person. Their ceiling
 * becomes what a registration gets when the operator sets no policy: every scope of the table as it
 * is now, in its order (their own kept, should one be unknown), and their default stays their registered scope;
 * the policy as it is at each authorization (DYNAMIC_REGISTRATION_SCOPES, CLIENT_METADATA_SCOPES)
 * bounds them as it bounds every self-registered client. Rows are those 0020 left with
 * `default_scopes = scopes` (a registration since whose scope equalled its ceiling is one of them;
 * under the same policy it may ask for nothing more than before). Nothing any grant or token holds
 * changes. Expand only: a server of the previous version reads the rows as before.
 */
const SCOPES_OF_THE_TABLE = ['links:read', 'links:write', 'ecommerce:write', 'products:sync']

export async function up(db: Kysely<any>): Promise<void> {
  // Literals, not a bound array: the same statement on PostgreSQL and PGlite.
  const table = sql`array[${sql.join(SCOPES_OF_THE_TABLE.map((s) => sql.lit(s)))}]::text[]`
  await sql`
    update clients
       set scopes = ${table} || array(select s from unnest(scopes) s where s <> all(${table}))
     where kind = 'dynamic' and default_scopes is not null and default_scopes = scopes`.execute(db)
}

/** Nothing to undo: the wider ceiling is bounded by the policy, and the previous version reads it. */
export async function down(): Promise<void> {}
