import { Writable } from 'node:stream'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  adminHeaders,
  GENEROUS_LIMITS,
  listenTestApp,
  TEST_ADMIN_TOKEN,
  type TestApp,
} from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { createRunningClock } from '../helpers/clock.js'
import { createParty, exchangeCode, tokenRequest } from '../helpers/fixtures.js'
import { basicAuth, createResourceServer, introspectRequest } from '../helpers/tokens.js'
import { runWholeFlow, spellings } from '../helpers/whole-flow.js'
import { cliAgainst } from '../helpers/cli.js'

/**
 * The audit trail (issue 18): what is recorded, that it is recorded with the change it records and
 * never without it, that it holds no secret, and that it can be read (admin API, CLI, the user's
 * own page) and is deleted only by retention.
 */
let t: TestApp
/** Real time, so that the trail's times and filters read as in production; moved past the retry window. */
const clock = createRunningClock()
let base: string
let adminBase: string
const lines: string[] = []

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const started = await listenTestApp(
    { clock, logDestination: sink, env: { LOG_LEVEL: 'info', ...GENEROUS_LIMITS } },
    { admin: true },
  )
  t = started.t
  base = started.issuer
  adminBase = started.adminUrl!
})
afterAll(async () => t.close())

interface EventJson {
  id: string
  occurred_at: string
  type: string
  actor: { kind: string; id: string | null }
  target: { kind: string; id: string | null } | null
  user_id: string | null
  client_id: string | null
  client_address: string | null
  user_agent: string | null
  request_id: string | null
  details: Record<string, unknown>
}

async function audit(query = ''): Promise<{ events: EventJson[]; next_cursor: string | null }> {
  const res = await t.admin.inject({ method: 'GET', url: `/admin/audit${query}`, headers: adminHeaders })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

const cli = cliAgainst(() => adminBase)

/** Every audit row as text, for looking for what must not be there. */
async function wholeTable(): Promise<string> {
  const { rows } = await sql<{ row: string }>`select audit_events::text as row from audit_events`.execute(
    t.database.db,
  )
  return rows.map((r) => r.row).join('\n')
}

describe('a whole deployment flow', () => {
  it('records who did what, with the request id of its log lines, and no secret or token', async () => {
    const { secrets } = await runWholeFlow(base, adminBase, TEST_ADMIN_TOKEN)
    const { events } = await audit('?limit=1000')
    const types = new Set(events.map((e) => e.type))
    for (const type of [
      'client.created',
      'user.created',
      'resource_server.created',
      'sign_in.failed',
      'sign_in.succeeded',
      'consent.granted',
      'code.replayed',
      'grant.revoked',
      'signing_key.rotated',
      'admin.unauthorized',
      'user.deleted',
    ])
      expect(types, type).toContain(type)

    // A user revoked on the page: actor the user, reason user_revoked, the request's address and agent.
    const revoked = events.find((e) => e.type === 'grant.revoked' && e.details.reason === 'user_revoked')!
    expect(revoked.actor).toEqual({ kind: 'user', id: revoked.user_id })
    expect(revoked.client_address).toBe('127.0.0.1')
    expect(revoked.user_agent).toBeTruthy()
    // The request id is the reqId of that request's log lines.
    const logged = lines.map((l) => JSON.parse(l) as { reqId?: string; req?: { url?: string } })
    const requestLines = logged.filter((l) => l.reqId === revoked.request_id)
    expect(requestLines.some((l) => l.req?.url?.includes(`/account/apps/${revoked.client_id}`))).toBe(true)
    // Unique across listeners and instances (not Fastify's per-process counter).
    expect(revoked.request_id).toMatch(/^[0-9a-f-]{36}$/)

    const failed = events.find((e) => e.type === 'sign_in.failed')!
    expect(failed).toMatchObject({ actor: { kind: 'anonymous' }, details: { reason: 'wrong_password' } })
    expect(events.find((e) => e.type === 'admin.unauthorized')).toMatchObject({
      details: { method: 'GET', path: '/admin/users', sent: 'wrong_token' },
    })

    const table = await wholeTable()
    for (const [name, secret] of Object.entries(secrets))
      for (const spelling of spellings(secret)) expect(table.includes(spelling), name).toBe(false)
  })
})

describe('refresh-token reuse and code replay', () => {
  it('each revokes its family with one row naming the family, the client that presented it and the user', async () => {
    const party = await createParty(t)
    const rows = async () =>
      Number(
        (await sql<{ n: string }>`select count(*) as n from audit_events`.execute(t.database.db)).rows[0]!.n,
      )
    const before = await rows()
    const first = await exchangeCode(t, party)
    const rotate = (token: string) =>
      tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: party.client.id })
    expect((await rotate(first.refresh_token)).statusCode).toBe(200)
    // The hot paths write nothing: a code exchange and a refresh leave the trail as it was.
    expect(await rows()).toBe(before)
    // Inside REFRESH_REUSE_WINDOW a spent token is a retry and no theft: nothing is recorded.
    expect((await rotate(first.refresh_token)).statusCode).toBe(200)
    expect(await rows()).toBe(before)
    clock.advance(t.config.refreshReuseWindow)
    expect((await rotate(first.refresh_token)).statusCode).toBe(400)
    const { events } = await audit(`?type=refresh_token.reused&client_id=${party.client.id}`)
    expect(events).toHaveLength(1)
    expect(events[0]!.request_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(events[0]).toMatchObject({
      actor: { kind: 'client', id: party.client.id },
      target: { kind: 'refresh_family' },
      user_id: party.userId,
    })
    const table = await wholeTable()
    expect(table).not.toContain(first.refresh_token)
    expect(table).not.toContain(first.access_token)
  })
})

/** Makes inserting an audit row of `type` fail, as a full disk or a bug would. */
async function failAuditOf(type: string) {
  await sql`create or replace function audit_fault() returns trigger language plpgsql as $$
    begin
      if new.event_type = ${sql.lit(type)} then raise exception 'injected audit failure'; end if;
      return new;
    end $$`.execute(t.database.db)
  await sql`drop trigger if exists audit_fault on audit_events`.execute(t.database.db)
  await sql`create trigger audit_fault before insert on audit_events for each row execute function audit_fault()`.execute(
    t.database.db,
  )
}
const healAudit = () => sql`drop trigger if exists audit_fault on audit_events`.execute(t.database.db)

describe('the audit row is part of the change it records', () => {
  it('no change without its row: a failed insert rolls back a client disable and its revocations', async () => {
    const party = await createParty(t)
    await exchangeCode(t, party)
    await failAuditOf('client.disabled')
    try {
      const res = await t.admin.inject({
        method: 'DELETE',
        url: `/admin/clients/${party.client.id}`,
        headers: adminHeaders,
      })
      expect(res.statusCode).toBeGreaterThanOrEqual(500)
      expect(res.body).not.toContain('injected')
    } finally {
      await healAudit()
    }
    const client = await t.database.db
      .selectFrom('clients')
      .select('disabled_at')
      .where('id', '=', party.client.id)
      .executeTakeFirstOrThrow()
    expect(client.disabled_at).toBeNull()
    const grants = await t.database.db
      .selectFrom('grants')
      .select('revoked_at')
      .where('client_id', '=', party.client.id)
      .execute()
    expect(grants.every((g) => g.revoked_at === null)).toBe(true)
    expect((await audit(`?client_id=${party.client.id}&type=grant.revoked`)).events).toEqual([])
  })

  it('no change without its row: a consent, a sign-in, a password change', async () => {
    const s = await seed(t)
    await failAuditOf('consent.granted')
    try {
      await expect(
        t.services.grants.approveAndIssueCode({
          userId: s.user.id,
          clientId: s.client.id,
          redirectUri: s.params.redirect_uri,
          scopes: ['links:read'],
          codeChallenge: s.params.code_challenge,
        }),
      ).rejects.toThrow(/injected/)
    } finally {
      await healAudit()
    }
    expect(await t.services.grants.findLiveGrant(s.user.id, s.client.id)).toBeUndefined()
    const codes = await t.database.db
      .selectFrom('authorization_codes')
      .select('code_hash')
      .where('user_id', '=', s.user.id)
      .execute()
    expect(codes).toEqual([])

    const browser = new Browser(t.app)
    await failAuditOf('sign_in.succeeded')
    try {
      const res = await browser.signIn(s.email, PASSWORD)
      expect(res.statusCode).toBeGreaterThanOrEqual(500)
    } finally {
      await healAudit()
    }
    const sessions = await t.database.db
      .selectFrom('sign_in_sessions')
      .select('id')
      .where('user_id', '=', s.user.id)
      .execute()
    expect(sessions).toEqual([])

    expect((await browser.signIn(s.email, PASSWORD)).statusCode).toBe(303)
    const form = await browser.get('/account/password')
    await failAuditOf('password.changed')
    try {
      const res = await browser.post('/account/password', {
        csrf_token: hiddenField(form.body, 'csrf_token'),
        current_password: PASSWORD,
        new_password: 'a brand new password',
        confirm_password: 'a brand new password',
      })
      expect(res.statusCode).toBeGreaterThanOrEqual(500)
    } finally {
      await healAudit()
    }
    // The old password still works: nothing changed.
    expect((await new Browser(t.app).signIn(s.email, PASSWORD)).statusCode).toBe(303)
  })

  it('no row without its change: a refused change writes nothing', async () => {
    const before = (await audit('?type=user.created&limit=1000')).events.length
    const taken = await seed(t)
    const res = await t.admin.inject({
      method: 'POST',
      url: '/admin/users',
      headers: adminHeaders,
      payload: { email: taken.email.toUpperCase(), password: PASSWORD },
    })
    expect(res.statusCode).toBe(409)
    expect((await audit('?type=user.created&limit=1000')).events.length).toBe(before + 1)
  })

  it('a refusal whose row cannot be written still answers as before, and the failure is logged', async () => {
    const s = await seed(t)
    await failAuditOf('sign_in.failed')
    try {
      const res = await new Browser(t.app).signIn(s.email, 'wrong password')
      expect(res.statusCode).toBe(400)
      expect(res.body).toContain('Email or password is incorrect')
    } finally {
      await healAudit()
    }
    expect(lines.some((l) => l.includes('audit event not recorded') && l.includes('sign_in.failed'))).toBe(
      true,
    )
  })
})

describe("the operator's lifecycle changes", () => {
  /** The rows about one target, oldest first. */
  const rowsOf = (targetId: string) =>
    t.database.db
      .selectFrom('audit_events')
      .select(['event_type', 'actor_kind', 'details'])
      .where('target_id', '=', targetId)
      .orderBy('id')
      .execute()
  const admin = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.admin.inject({ method, url, headers: adminHeaders, ...(payload ? { payload } : {}) })

  it('an application updated (its narrowing revoking a grant), disabled and enabled again', async () => {
    const party = await createParty(t, { grantScopes: ['links:write'] })
    const patched = await admin('PATCH', `/admin/clients/${party.client.id}`, {
      name: 'Renamed',
      scopes: ['links:read'],
    })
    expect(patched.statusCode).toBe(200)
    expect((await admin('DELETE', `/admin/clients/${party.client.id}`)).statusCode).toBe(200)
    expect((await admin('POST', `/admin/clients/${party.client.id}/enable`)).statusCode).toBe(200)
    // Enabling an enabled client changes nothing and records nothing.
    expect((await admin('POST', `/admin/clients/${party.client.id}/enable`)).statusCode).toBe(200)

    expect(await rowsOf(party.client.id)).toEqual([
      { event_type: 'client.created', actor_kind: 'operator', details: expect.any(Object) },
      {
        event_type: 'client.updated',
        actor_kind: 'operator',
        details: {
          fields: ['name', 'scopes'],
          scopes: ['links:read'],
          previous_scopes: party.client.scopes,
          grants_revoked: 1,
          grants_narrowed: 0,
          refresh_families_revoked: 0,
        },
      },
      { event_type: 'client.disabled', actor_kind: 'operator', details: { grants_revoked: 0 } },
      { event_type: 'client.enabled', actor_kind: 'operator', details: {} },
    ])
    // The grant the narrowing left empty has its own row, as any revocation does.
    expect(await rowsOf(party.grant.id)).toEqual([
      { event_type: 'grant.revoked', actor_kind: 'operator', details: { reason: 'client_scopes_narrowed' } },
    ])
  })

  it('a resource server updated, disabled, enabled, its secret rotated, deleted; never the secret', async () => {
    const created = await admin('POST', '/admin/resource-servers', {
      name: 'Audit API',
      resource: 'https://audit-api.example/api',
      scopes: ['links:read'],
    })
    expect(created.statusCode).toBe(201)
    const id = created.json().id as string
    expect((await admin('PATCH', `/admin/resource-servers/${id}`, { name: 'Audited API' })).statusCode).toBe(
      200,
    )
    expect((await admin('POST', `/admin/resource-servers/${id}/disable`)).statusCode).toBe(200)
    expect((await admin('POST', `/admin/resource-servers/${id}/disable`)).statusCode).toBe(200)
    expect((await admin('POST', `/admin/resource-servers/${id}/enable`)).statusCode).toBe(200)
    const rotated = await admin('POST', `/admin/resource-servers/${id}/secret`, { overlap_seconds: 600 })
    expect(rotated.statusCode).toBe(200)
    expect((await admin('DELETE', `/admin/resource-servers/${id}`)).statusCode).toBe(200)

    const rows = await rowsOf(id)
    expect(rows.map((r) => r.event_type)).toEqual([
      'resource_server.created',
      'resource_server.updated',
      'resource_server.disabled',
      'resource_server.enabled',
      'resource_server.secret_rotated',
      'resource_server.deleted',
    ])
    expect(rows.every((r) => r.actor_kind === 'operator')).toBe(true)
    // Each row names the admin request it was made in: its log lines' reqId, the caller's address.
    const facts = await t.database.db
      .selectFrom('audit_events')
      .select(['request_id', 'client_address'])
      .where('target_id', '=', id)
      .execute()
    for (const f of facts) {
      expect(f.request_id).toMatch(/^[0-9a-f-]{36}$/)
      expect(f.client_address).toBe('127.0.0.1')
    }
    expect(new Set(facts.map((f) => f.request_id)).size).toBe(facts.length)
    expect(rows[1]!.details).toEqual({ name: 'Audited API', previous_name: 'Audit API' })
    expect(rows[4]!.details).toMatchObject({
      overlap_seconds: 600,
      previous_secret_until: expect.any(String),
    })
    expect(rows[5]!.details).toMatchObject({
      resource: 'https://audit-api.example/api',
      refresh_families_revoked: 0,
    })
    const table = await wholeTable()
    for (const secret of [created.json().secret as string, rotated.json().secret as string])
      expect(table).not.toContain(secret)
  })

  it('a signing key revoked: the replacement named when it was the active one', async () => {
    const old = t.services.signingKeys.activeSigningKey().kid
    const rotated = (await admin('POST', '/admin/keys/rotate')).json() as { kid: string }
    expect((await admin('POST', `/admin/keys/${old}/revoke`)).statusCode).toBe(200)
    const revokedActive = await admin('POST', `/admin/keys/${rotated.kid}/revoke`)
    expect(revokedActive.statusCode).toBe(200)
    const replacement = t.services.signingKeys.activeSigningKey().kid
    expect(replacement).not.toBe(rotated.kid)
    // Revoking a revoked key again changes nothing and records nothing.
    expect((await admin('POST', `/admin/keys/${old}/revoke`)).statusCode).toBe(200)
    expect((await rowsOf(old)).filter((r) => r.event_type === 'signing_key.revoked')).toEqual([
      { event_type: 'signing_key.revoked', actor_kind: 'operator', details: { replacement_kid: null } },
    ])
    expect((await rowsOf(rotated.kid)).map((r) => [r.event_type, r.details])).toEqual([
      ['signing_key.rotated', { alg: 'ES256', retired_kid: old }],
      ['signing_key.revoked', { replacement_kid: replacement }],
    ])
  })

  it('no change without its row: a narrowing, a secret rotation and a key revocation roll back', async () => {
    const party = await createParty(t, { grantScopes: ['links:write'] })
    await failAuditOf('client.updated')
    try {
      const res = await admin('PATCH', `/admin/clients/${party.client.id}`, { scopes: ['links:read'] })
      expect(res.statusCode).toBeGreaterThanOrEqual(500)
      expect(res.body).not.toContain('injected')
    } finally {
      await healAudit()
    }
    expect((await t.services.clients.getClient(party.client.id)).scopes).toEqual(party.client.scopes)
    expect((await t.services.grants.findLiveGrant(party.userId, party.client.id))?.scopes).toEqual([
      'links:write',
    ])

    const rs = await createResourceServer(t, 'Rolled API')
    await failAuditOf('resource_server.secret_rotated')
    try {
      const res = await admin('POST', `/admin/resource-servers/${rs.id}/secret`, { overlap_seconds: 0 })
      expect(res.statusCode).toBeGreaterThanOrEqual(500)
    } finally {
      await healAudit()
    }
    // The secret is the one it was: a rotation with no overlap would have stopped it at once.
    const check = await introspectRequest(t, { token: 'x' }, basicAuth(rs.id, rs.secret))
    expect(check.statusCode).toBe(200)

    const kid = t.services.signingKeys.activeSigningKey().kid
    await failAuditOf('signing_key.revoked')
    try {
      const res = await admin('POST', `/admin/keys/${kid}/revoke`)
      expect(res.statusCode).toBeGreaterThanOrEqual(500)
    } finally {
      await healAudit()
    }
    expect(t.services.signingKeys.activeSigningKey().kid).toBe(kid)
    expect(t.services.signingKeys.isRevoked(kid)).toBe(false)
    const jwks = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    expect((jwks.json().keys as { kid: string }[]).map((k) => k.kid)).toContain(kid)
  })
})

describe('append-only', () => {
  it('the database refuses to update an audit row', async () => {
    await expect(
      sql`update audit_events set event_type = 'x' where id = (select max(id) from audit_events)`.execute(
        t.database.db,
      ),
    ).rejects.toThrow(/append-only/)
  })
})

describe('reading it', () => {
  it('filters by user, client, type and time, newest first, with a cursor that pages without gaps', async () => {
    const s = await seed(t)
    const browser = new Browser(t.app)
    for (let i = 0; i < 5; i++) await browser.signIn(s.email, `wrong ${i}`)
    const all = await audit(`?user_id=${s.user.id}`)
    expect(all.events.map((e) => e.type)).toEqual([...Array(5).fill('sign_in.failed'), 'user.created'])
    const ids: string[] = []
    let cursor: string | null = null
    do {
      const page = await audit(`?user_id=${s.user.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(page.events.length).toBeLessThanOrEqual(2)
      ids.push(...page.events.map((e) => e.id))
      cursor = page.next_cursor
    } while (cursor)
    expect(ids).toEqual(all.events.map((e) => e.id))
    const times = all.events.map((e) => e.occurred_at)
    expect([...times].sort().reverse()).toEqual(times)

    const created = all.events.at(-1)!
    expect((await audit(`?user_id=${s.user.id}&type=user.created`)).events).toHaveLength(1)
    expect((await audit(`?user_id=${s.user.id}&to=${created.occurred_at}`)).events).toEqual([])
    expect((await audit(`?user_id=${s.user.id}&from=${created.occurred_at}`)).events).toHaveLength(6)
    expect((await audit(`?client_id=${s.client.id}`)).events.map((e) => e.type)).toEqual(['client.created'])
  })

  it('refuses bad filters with problem details naming the parameter', async () => {
    for (const [query, field] of [
      ['?user_id=nope', 'user_id'],
      ['?type=nope', 'type'],
      ['?from=yesterday', 'from'],
      ['?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
      ['?limit=1001', 'limit'],
      ['?cursor=bm9wZQ', 'cursor'],
    ]) {
      const res = await t.admin.inject({ method: 'GET', url: `/admin/audit${query}`, headers: adminHeaders })
      expect(res.statusCode, query).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      expect(res.json().field, query).toBe(field)
    }
  })

  it('linkauth audit list: by email, by type, as a table and as JSON', async () => {
    const s = await seed(t)
    await new Browser(t.app).signIn(s.email, 'wrong')
    const table = await cli(['audit', 'list', '--email', s.email.toUpperCase(), '--type', 'sign_in.failed'])
    expect(table.code, table.err).toBe(0)
    expect(table.out).toMatch(/TIME\s+TYPE\s+ACTOR/)
    expect(table.out).toMatch(new RegExp(`sign_in\\.failed\\s+anonymous\\s+user:${s.user.id}`))
    const json = await cli(['audit', 'list', '--user-id', s.user.id, '--json'])
    expect(JSON.parse(json.out).events.map((e: EventJson) => e.type)).toEqual([
      'sign_in.failed',
      'user.created',
    ])
    expect((await cli(['audit', 'list', '--email', 'nobody@example.com'])).code).toBe(1)
    const help = await cli(['audit', 'list', '--help'])
    expect(help.out).toContain('--client-id')
  })

  it("shows the user their own consents and revocations on /account/activity, and no one else's", async () => {
    const s = await seed(t)
    const consent = (scopes: string[]) =>
      t.services.grants.approveAndIssueCode({
        userId: s.user.id,
        clientId: s.client.id,
        redirectUri: s.params.redirect_uri,
        scopes,
        codeChallenge: s.params.code_challenge,
      })
    await consent(['links:read'])
    await consent(['links:read', 'links:write'])
    const browser = new Browser(t.app)
    expect((await browser.signIn(s.email, PASSWORD)).statusCode).toBe(303)
    let page = await browser.get('/account/activity')
    expect(page.body).toContain('Recent activity')
    expect(page.body).toContain('You allowed <strong>Link App</strong> (<code>links:read</code>)')
    expect(page.body).toContain('You allowed <strong>Link App</strong> more')
    await browser.post(`/account/apps/${s.client.id}/revoke`, {
      csrf_token: hiddenField((await browser.get('/account/apps')).body, 'csrf_token'),
    })
    page = await browser.get('/account/activity')
    expect(page.body).toContain('Access for <strong>Link App</strong> ended: you revoked its access')
    const widened = await audit(`?user_id=${s.user.id}&type=consent.widened`)
    expect(widened.events[0]!.details).toMatchObject({
      scopes: ['links:read', 'links:write'],
      previous_scopes: ['links:read'],
    })
    const other = await seed(t)
    const otherBrowser = new Browser(t.app)
    await otherBrowser.signIn(other.email, PASSWORD)
    expect((await otherBrowser.get('/account/activity')).body).not.toContain('You allowed')
  })
})

describe('retention', () => {
  it('housekeeping deletes rows older than AUDIT_RETENTION, in batches, and nothing newer', async () => {
    const old = new Date(Date.now() - 401 * 24 * 3600 * 1000)
    await sql`insert into audit_events (occurred_at, event_type, actor_kind)
      select ${old}, 'sign_in.failed', 'anonymous' from generate_series(1, 5)`.execute(t.database.db)
    const before = await sql<{ n: string }>`select count(*) as n from audit_events`.execute(t.database.db)
    const run = await t.services.housekeeping.run()
    expect(run.deleted.audit_events).toBe(5)
    const after = await sql<{ n: string }>`select count(*) as n from audit_events`.execute(t.database.db)
    expect(Number(after.rows[0]!.n)).toBe(Number(before.rows[0]!.n) - 5)
  })
})
