import { readFileSync } from 'node:fs'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { auditTrailIsRewritable } from '../../src/audit/audit.service.js'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { migrateThrough } from '../../src/db/migrator.js'
import { testEngine } from '../helpers/database.js'
import { databaseUrl, uniqueName } from '../helpers/postgres-admin.js'

// Issue 31, item 7: the audit trail is append-only only as far as the serving role allows. This runs
// the setup of docs/operating.md, "Database roles", on a real PostgreSQL with non-superuser roles of
// its own (roles are cluster-wide: unique names, dropped afterwards), migrates as the owner through
// DATABASE_MIGRATION_URL's path, and then tries to change the trail as the serving role.
const postgres = testEngine() === 'postgres'

/** The SQL blocks of that section, in order, with the role and database names made unique. */
function setupBlocks(names: Record<string, string>): string[] {
  const docs = readFileSync('docs/operating.md', 'utf8')
  const section = docs.slice(
    docs.indexOf('### Database roles'),
    docs.indexOf('Read it with `linkauth audit list`'),
  )
  const blocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!)
  return blocks.map((b) => b.replace(/\blinkauth(_owner|_app)?\b/g, (name) => names[name] ?? name))
}

/** Runs each statement of `text` on its own (CREATE DATABASE cannot share a transaction). */
async function run(url: string, text: string) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (const statement of text.split(/;\s*(?:\n|$)/).filter((t) => t.trim() !== ''))
      await client.query(statement)
  } finally {
    await client.end()
  }
}

describe.skipIf(!postgres)('a serving role of its own (PostgreSQL-only)', () => {
  const suffix = uniqueName('x').slice(2)
  const names = {
    linkauth: `la_db_${suffix}`,
    linkauth_owner: `la_owner_${suffix}`,
    linkauth_app: `la_app_${suffix}`,
  }
  let adminUrl: string
  let ownerUrl: string
  let appUrl: string
  let app: DatabaseHandle
  let owner: DatabaseHandle

  beforeAll(async () => {
    const chosen = inject('testDatabase')
    if (chosen.engine !== 'postgres') throw new Error('PostgreSQL only')
    adminUrl = chosen.adminUrl
    const [asSuperuser, asOwnerBefore, asOwnerAfter] = setupBlocks(names)
    expect(asOwnerAfter).toContain('revoke update, delete, truncate on audit_events')
    await run(adminUrl, asSuperuser!)
    const at = (role: string) => {
      const url = new URL(databaseUrl(adminUrl, names.linkauth))
      url.username = role
      url.password = role === names.linkauth_owner ? 'owner-secret' : 'app-secret'
      return url.toString()
    }
    ownerUrl = at(names.linkauth_owner)
    await run(ownerUrl, asOwnerBefore!)
    appUrl = at(names.linkauth_app)
    app = await connectDatabase({ databaseUrl: appUrl, poolSize: 2 })
    await migrateThrough(app.db, ownerUrl)
    await run(ownerUrl, asOwnerAfter!)
    owner = await connectDatabase({ databaseUrl: ownerUrl, poolSize: 1 })
  }, 120_000)

  afterAll(async () => {
    await app?.close()
    await owner?.close()
    if (!adminUrl) return
    await run(adminUrl, `drop database if exists ${names.linkauth} with (force)`)
    await run(
      adminUrl,
      `drop role if exists ${names.linkauth_app}; drop role if exists ${names.linkauth_owner}`,
    )
  })

  /** The SQLSTATE the serving role gets for `statement`, or 'accepted'. */
  const refused = async (statement: string) => {
    try {
      await run(appUrl, statement)
    } catch (err) {
      return (err as { code?: string }).code
    }
    return 'accepted'
  }

  it('the serving role appends, and cannot delete, update, truncate or disable the trigger (42501)', async () => {
    await app.db
      .insertInto('audit_events')
      .values({ occurred_at: new Date(), event_type: 'user.created', actor_kind: 'operator', details: '{}' })
      .execute()
    const rows = await app.db.selectFrom('audit_events').select('id').execute()
    expect(rows.length).toBeGreaterThan(0)
    expect(await refused('delete from audit_events')).toBe('42501')
    expect(await refused(`update audit_events set event_type = 'sign_in.failed'`)).toBe('42501')
    expect(await refused('truncate audit_events')).toBe('42501')
    expect(await refused('alter table audit_events disable trigger all')).toBe('42501')
    expect(await refused('alter table audit_events disable trigger audit_events_no_update')).toBe('42501')
    expect(await app.db.selectFrom('audit_events').select('id').execute()).toEqual(rows)
  })

  it('the start-up check tells the two roles apart: the owner could rewrite the trail, the serving role not', async () => {
    expect(await auditTrailIsRewritable(app.db)).toBe(false)
    expect(await auditTrailIsRewritable(owner.db)).toBe(true)
  })
})
