import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { hashPassword } from '../src/accounts/password.js'
import { connectDatabase } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrator.js'

/**
 * `npm run bench:year-fill`: a database holding a year of rows (issue 41), generated inside
 * PostgreSQL (generate_series, INSERT … SELECT), not through the API, so that ten million rows take
 * minutes. The database (YEAR_DATABASE, default `linkauth_year`, on the cluster of
 * BENCH_DATABASE_URL) is dropped, made again and migrated; the tables' keys, unique constraints,
 * foreign keys and indexes are dropped while the rows go in and made again afterwards (which also
 * checks every row against them); then VACUUM (ANALYZE). It prints each step's time and the size on
 * disk of the database and of each table and its indexes.
 *
 * The sizes (YEAR_USERS, YEAR_GRANTS, …, below) multiply by YEAR_SCALE (1; 0.01 for a quick try).
 * Rows are deterministic where rows refer to each other (ids are md5 of a label and a number, so a
 * grant names its user without a join) and random where nothing depends on them (timestamps).
 */

export interface YearSizes {
  users: number
  /** Operator-registered clients: most grants go to these. */
  registeredClients: number
  /** Dynamic registrations (RFC 7591); only `usedDynamicShare` of them ever got a grant. */
  dynamicClients: number
  usedDynamicShare: number
  grants: number
  refreshFamilies: number
  /** Rows of refresh_tokens, spread evenly over the families (one unrotated head each). */
  refreshTokens: number
  /** Share of families whose newest token is younger than the refresh-token TTL (30 days). */
  recentFamilyShare: number
  auditEvents: number
  revocationEvents: number
}

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const scale = env('YEAR_SCALE', 1)
const count = (name: string, fallback: number) => Math.max(1, Math.round(env(name, fallback) * scale))

export const yearSizes: YearSizes = {
  users: count('YEAR_USERS', 1_000_000),
  registeredClients: count('YEAR_REGISTERED_CLIENTS', 200),
  dynamicClients: count('YEAR_DYNAMIC_CLIENTS', 200_000),
  usedDynamicShare: env('YEAR_USED_DYNAMIC_SHARE', 0.1),
  grants: count('YEAR_GRANTS', 1_000_000),
  refreshFamilies: count('YEAR_FAMILIES', 2_000_000),
  refreshTokens: count('YEAR_REFRESH_TOKENS', 10_000_000),
  recentFamilyShare: env('YEAR_RECENT_FAMILY_SHARE', 0.2),
  auditEvents: count('YEAR_AUDIT_EVENTS', 5_000_000),
  revocationEvents: count('YEAR_REVOCATION_EVENTS', 1_000_000),
}

/** The tables the fill writes; their keys and indexes are dropped during the fill. */
const FILLED = [
  'users',
  'clients',
  'grants',
  'refresh_families',
  'refresh_tokens',
  'authorization_codes',
  'audit_events',
  'revocation_events',
]

/** A SHA-256 in base64url without padding (43 characters), as the server stores its hashes. */
const hash43 = (expr: string) =>
  `rtrim(translate(encode(sha256((${expr})::bytea), 'base64'), '+/', '-_'), '=')`
/** A number in [0, 1) fixed by `expr`: what a random() would be, but the same every time. */
const frac = (expr: string) => `(('x' || substr(md5(${expr}), 1, 8))::bit(32)::bigint / 4294967296.0)`

/** The SQL of each step, in order. Table sizes are inlined (they are numbers, not input). */
function fillSteps(s: YearSizes, passwordHash: string): [string, string][] {
  const usedDynamic = Math.max(1, Math.round(s.dynamicClients * s.usedDynamicShare))
  const pool = s.registeredClients + usedDynamic
  // The client of pool index `i`: registered clients first, then the dynamic ones that were used.
  const clientOf = (i: string) =>
    `(case when (${i}) < ${s.registeredClients} then 'year-app-' || lpad((${i})::text, 6, '0')
           else 'dyn-' || md5('d' || ((${i}) - ${s.registeredClients})) end)`
  const perFamily = Math.floor(s.refreshTokens / s.refreshFamilies)
  const extra = s.refreshTokens % s.refreshFamilies
  return [
    [
      'users',
      `insert into users (id, email, password_hash, created_at)
       select md5('u' || i)::uuid, 'user' || i || '@year.example', '${passwordHash}',
              now() - interval '365 days' * ${frac(`'uc' || i`)}
         from generate_series(0::bigint, ${s.users - 1}) i`,
    ],
    [
      'clients (registered)',
      `insert into clients (id, name, redirect_uris, scopes, created_at, kind, description)
       select 'year-app-' || lpad(i::text, 6, '0'), 'Year App ' || i,
              array['https://app' || i || '.example/callback'], '{links:read,links:write}',
              now() - interval '365 days' - interval '30 days' * random(), 'registered',
              'An application registered by the operator.'
         from generate_series(0::bigint, ${s.registeredClients - 1}) i`,
    ],
    [
      'clients (dynamic)',
      // Registered over the year; the first `usedDynamic` are the ones that got grants.
      `insert into clients (id, name, redirect_uris, scopes, created_at, kind, registration_token_hash)
       select 'dyn-' || md5('d' || i), 'Agent ' || i, array['http://127.0.0.1/callback'], '{links:read}',
              now() - interval '365 days' * random(), 'dynamic', ${hash43(`'rt' || i`)}
         from generate_series(0::bigint, ${s.dynamicClients - 1}) i`,
    ],
    [
      'grants',
      // Grant g belongs to user g % users, its j = g / users-th; the user's j-th grant goes to pool
      // index (base + j) % pool, so one user never holds two grants to one client. 70 % of users
      // start at a registered client. One grant in ten is revoked.
      `insert into grants (id, user_id, client_id, scopes, created_at, updated_at, last_used_at, revoked_at)
       select md5('g' || g)::uuid, md5('u' || u)::uuid, ${clientOf(`(base + j) % ${pool}`)},
              '{links:read,links:write}', c, c,
              case when g % 10 <> 9 then c + (now() - c) * random() end,
              case when g % 10 = 9 then c + (now() - c) * random() end
         from (select g, g % ${s.users} as u, g / ${s.users} as j,
                      case when ${frac(`'ub' || (g % ${s.users})`)} < 0.7
                           then (g % ${s.users} * 7919) % ${s.registeredClients}
                           else ${s.registeredClients} + (g % ${s.users} * 7919) % ${usedDynamic} end as base,
                      now() - interval '365 days' * ${frac(`'gc' || g`)} as c
                 from generate_series(0::bigint, ${s.grants - 1}) g) s`,
    ],
    [
      'refresh_families',
      // Family f of grant f % grants. Its newest token was issued at `head`: within the refresh-token
      // TTL (30 days) for recentFamilyShare of them, earlier in the year for the rest; its n tokens
      // were issued `step` apart before that (10 minutes to 3 days), never before its grant. A family
      // of a revoked grant is revoked with it; one in 33 of the others was revoked for a reuse. The
      // head and n stay in an unlogged table for the tokens' step.
      `create unlogged table year_fill_families as
       select f, id, gid, created, greatest(head, created) as head, n
         from (select f, md5('f' || f)::uuid as id, gid, n, head, greatest(head - step * (n - 1), gc) as created
                 from (select f, n, gc, gid,
                              greatest(gc + interval '1 second',
                                       case when ${frac(`'fh' || f`)} < ${s.recentFamilyShare}
                                            then now() - interval '30 days' * random()
                                            else now() - interval '30 days' - interval '335 days' * random() end) as head,
                              interval '10 minutes' + interval '3 days' * random() as step
                         from (select f, ${perFamily} + (f < ${extra})::int as n,
                                      md5('g' || (f % ${s.grants}))::uuid as gid,
                                      now() - interval '365 days' * ${frac(`'gc' || (f % ${s.grants})`)} as gc
                                 from generate_series(0::bigint, ${s.refreshFamilies - 1}) f) a) b) c;
       insert into refresh_families (id, grant_id, client_id, user_id, scopes, created_at, expires_at,
                                     revoked_at, revoked_reason)
       select fam.id, g.id, g.client_id, g.user_id, g.scopes, fam.created, fam.created + interval '180 days',
              case when g.revoked_at is not null then greatest(g.revoked_at, fam.head)
                   when fam.f % 33 = 7 then fam.head + interval '1 hour' * random() end,
              case when g.revoked_at is not null then 'grant_revoked'
                   when fam.f % 33 = 7 then 'refresh_token_reuse' end
         from year_fill_families fam join grants g on g.id = fam.gid`,
    ],
    [
      'refresh_tokens',
      // Token r is the p = (r / families)-th of family r % families; a family's tokens are spread
      // evenly from its creation to its head, each spent (rotated) when the next was issued.
      `insert into refresh_tokens (token_hash, family_id, scopes, created_at, expires_at, rotated_at)
       select ${hash43(`'t' || r`)}, fam.id, '{links:read,links:write}', issued, issued + interval '30 days',
              case when p < fam.n - 1
                   then fam.created + (fam.head - fam.created) * (p + 1) / (fam.n - 1) end
         from (select r, r / ${s.refreshFamilies} as p, r % ${s.refreshFamilies} as f
                 from generate_series(0::bigint, ${s.refreshTokens - 1}) r) t
         join year_fill_families fam using (f)
         cross join lateral (select fam.created + (fam.head - fam.created) * p / greatest(fam.n - 1, 1) as issued) i`,
    ],
    [
      'authorization_codes',
      // The code that started each family, consumed at its start: kept while the family lives.
      `insert into authorization_codes (code_hash, client_id, user_id, grant_id, redirect_uri, scopes,
                                        code_challenge, created_at, expires_at, consumed_at, family_id)
       select ${hash43(`'c' || fam.f`)}, g.client_id, g.user_id, g.id, 'https://app.example/callback',
              g.scopes, ${hash43(`'cc' || fam.f`)}, fam.created - interval '5 seconds',
              fam.created + interval '55 seconds', fam.created, fam.id
         from year_fill_families fam join grants g on g.id = fam.gid;
       drop table year_fill_families`,
    ],
    [
      'audit_events',
      // Sign-ins most, then consents, revocations and the rest, over the year, by users of the fill.
      `insert into audit_events (occurred_at, event_type, actor_kind, actor_id, target_kind, target_id,
                                 user_id, client_id, client_address, user_agent, request_id, details)
       select at, kind, 'user', uid::text, case when kind like 'sign_in%' then 'user' else 'grant' end,
              case when kind like 'sign_in%' then uid::text else md5('g' || i)::uuid::text end,
              uid, case when kind like 'sign_in%' then null else 'year-app-' || lpad((i % ${s.registeredClients})::text, 6, '0') end,
              '198.51.100.' || (i % 250), 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
              'req-' || md5('q' || i), case when kind = 'consent.granted' then '{"scopes":["links:read","links:write"]}'::jsonb else '{}'::jsonb end
         from (select i, now() - interval '365 days' * random() as at,
                      md5('u' || ((i * 7919) % ${s.users}))::uuid as uid,
                      (array['sign_in.succeeded', 'sign_in.succeeded', 'sign_in.succeeded', 'sign_in.succeeded',
                             'sign_in.succeeded', 'sign_in.failed', 'consent.granted', 'consent.granted',
                             'grant.revoked', 'refresh_token.reused'])[1 + i % 10] as kind
                 from generate_series(0::bigint, ${s.auditEvents - 1}) i) e`,
    ],
    [
      'revocation_events',
      // Families revoked (most), grants, deny-listed access tokens, disabled clients; each delivered
      // for an access token's lifetime plus leeway (660 s), as the trigger writes them.
      `insert into revocation_events (type, grant_id, family_id, access_token_jti, client_id, created_at, until)
       select kind,
              case when kind in ('family-revoked', 'grant-revoked') then md5('g' || (i % ${s.grants}))::uuid end,
              case when kind = 'family-revoked' then md5('f' || (i % ${s.refreshFamilies}))::uuid end,
              case when kind = 'access-token-revoked' then md5('j' || i)::uuid end,
              case when kind = 'client-disabled' then 'dyn-' || md5('d' || (i % ${s.dynamicClients})) end,
              at, at + interval '660 seconds'
         from (select i, now() - interval '365 days' * random() as at,
                      case when i % 20 < 12 then 'family-revoked' when i % 20 < 16 then 'grant-revoked'
                           when i % 20 < 19 then 'access-token-revoked' else 'client-disabled' end as kind
                 from generate_series(0::bigint, ${s.revocationEvents - 1}) i) e`,
    ],
  ]
}

/** One table's size on disk: heap (with TOAST), its indexes, and the rows in it. */
export interface TableSize {
  table: string
  rows: number
  tableBytes: number
  indexBytes: number
  indexes: { name: string; bytes: number }[]
}

/** The database's size and each table's, biggest first (row counts from the statistics, exact after ANALYZE). */
export async function databaseSizes(
  client: pg.Client,
): Promise<{ databaseBytes: number; tables: TableSize[] }> {
  const db = await client.query<{ bytes: string }>('select pg_database_size(current_database()) as bytes')
  const tables = await client.query<{
    table: string
    rows: string
    table_bytes: string
    index_bytes: string
  }>(
    `select c.relname as table, greatest(c.reltuples, 0)::bigint as rows,
            pg_table_size(c.oid) as table_bytes, pg_indexes_size(c.oid) as index_bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'r'
      order by pg_total_relation_size(c.oid) desc`,
  )
  const indexes = await client.query<{ table: string; name: string; bytes: string }>(
    `select t.relname as table, i.relname as name, pg_relation_size(i.oid) as bytes
       from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
       join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = 'public' order by pg_relation_size(i.oid) desc`,
  )
  return {
    databaseBytes: Number(db.rows[0]!.bytes),
    tables: tables.rows.map((t) => ({
      table: t.table,
      rows: Number(t.rows),
      tableBytes: Number(t.table_bytes),
      indexBytes: Number(t.index_bytes),
      indexes: indexes.rows
        .filter((i) => i.table === t.table)
        .map((i) => ({ name: i.name, bytes: Number(i.bytes) })),
    })),
  }
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

/** Prints the sizes of databaseSizes: tables of at least `minBytes` together (and each index with `indexes`). */
export function printSizes(
  sizes: Awaited<ReturnType<typeof databaseSizes>>,
  options: { indexes?: boolean; minBytes?: number } = {},
): void {
  console.log(`database: ${mib(sizes.databaseBytes)} MiB`)
  console.log(
    'table'.padEnd(28),
    'rows'.padStart(12),
    'table MiB'.padStart(10),
    'index MiB'.padStart(10),
    'B/row'.padStart(7),
  )
  for (const t of sizes.tables.filter((t) => t.tableBytes + t.indexBytes >= (options.minBytes ?? 1 << 20))) {
    console.log(
      t.table.padEnd(28),
      String(t.rows).padStart(12),
      mib(t.tableBytes).padStart(10),
      mib(t.indexBytes).padStart(10),
      (t.rows > 0 ? String(Math.round((t.tableBytes + t.indexBytes) / t.rows)) : '–').padStart(7),
    )
    if (options.indexes)
      for (const i of t.indexes) console.log(`  ${i.name}`.padEnd(52), mib(i.bytes).padStart(10))
  }
}

/** Drops the keys, foreign keys and indexes of the filled tables (and foreign keys into them); answers how to make them again. */
async function dropKeysAndIndexes(client: pg.Client): Promise<string[]> {
  const constraints = await client.query<{ table: string; name: string; def: string; contype: string }>(
    `select c.conrelid::regclass::text as table, c.conname as name, pg_get_constraintdef(c.oid) as def, c.contype
       from pg_constraint c
      where c.contype in ('p', 'u', 'f')
        and (c.conrelid::regclass::text = any($1) or c.confrelid::regclass::text = any($1))`,
    [FILLED],
  )
  const foreign = constraints.rows.filter((c) => c.contype === 'f')
  const keys = constraints.rows.filter((c) => c.contype !== 'f')
  for (const c of [...foreign, ...keys])
    await client.query(`alter table ${c.table} drop constraint ${c.name}`)
  const indexes = await client.query<{ name: string; def: string }>(
    `select indexname as name, indexdef as def from pg_indexes where schemaname = 'public' and tablename = any($1)`,
    [FILLED],
  )
  for (const i of indexes.rows) await client.query(`drop index ${i.name}`)
  const add = (c: { table: string; name: string; def: string }) =>
    `alter table ${c.table} add constraint ${c.name} ${c.def}`
  return [...keys.map(add), ...indexes.rows.map((i) => i.def), ...foreign.map(add)]
}

export interface FillReport {
  seconds: number
  steps: { step: string; seconds: number }[]
}

/**
 * Makes `database` afresh on the cluster of `adminUrl`, migrates it and fills it to `sizes`; prints
 * each step's time as it ends. The database's comment records the sizes (year.ts reads it).
 */
export async function fillYearDatabase(
  adminUrl: string,
  database: string,
  sizes: YearSizes,
): Promise<FillReport> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`drop database if exists ${database} with (force)`)
  await admin.query(`create database ${database}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  const migrated = await connectDatabase({ databaseUrl: url.toString(), poolSize: 1 })
  await migrateToLatest(migrated.db)
  await migrated.close()

  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  const steps: FillReport['steps'] = []
  const started = performance.now()
  const timed = async (step: string, run: () => Promise<unknown>) => {
    const t = performance.now()
    await run()
    const seconds = Math.round((performance.now() - t) / 100) / 10
    steps.push({ step, seconds })
    console.log(`${step.padEnd(40)} ${seconds.toFixed(1).padStart(7)} s`)
  }
  try {
    await client.query(`set maintenance_work_mem = '1GB'`)
    await client.query(`set work_mem = '512MB'`)
    await client.query(`set synchronous_commit = off`)
    await client.query(`select setseed(0.41)`)
    const rebuild = await dropKeysAndIndexes(client)
    // One password hash for every user, made the way the server makes them (nobody signs in as them).
    const passwordHash = await hashPassword('a year of users')
    for (const [step, text] of fillSteps(sizes, passwordHash)) await timed(step, () => client.query(text))
    await timed(`keys, indexes, foreign keys (${rebuild.length})`, async () => {
      for (const statement of rebuild) await client.query(statement)
    })
    await timed('vacuum (analyze)', () => client.query('vacuum (analyze)'))
    await client.query(
      `comment on database ${database} is ${pg.escapeLiteral(JSON.stringify({ yearFill: sizes }))}`,
    )
  } finally {
    await client.end()
  }
  return { seconds: Math.round((performance.now() - started) / 100) / 10, steps }
}

/** The year-filled database's URL on the cluster of BENCH_DATABASE_URL. */
export function yearDatabaseUrl(): { adminUrl: string; database: string; url: string } {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const database = process.env.YEAR_DATABASE ?? 'linkauth_year'
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error('YEAR_DATABASE: expected a plain lower-case name')
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return { adminUrl, database, url: url.toString() }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { adminUrl, database, url } = yearDatabaseUrl()
  console.log(`filling ${database}:`, JSON.stringify(yearSizes))
  const report = await fillYearDatabase(adminUrl, database, yearSizes)
  console.log(`fill: ${report.seconds.toFixed(1)} s in all`)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  printSizes(await databaseSizes(client), { indexes: true })
  await client.end()
}
