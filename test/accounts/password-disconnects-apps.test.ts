import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { eventLog, revokes, createStream } from '../helpers/events.js'
import { createParty, exchangeCode, type Party, tokenRequest, type TokenBody } from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * A password reset (account recovery) disconnects every application of the user: an application an
 * intruder connected must not outlive the recovery (issue 31). A user's own password change offers
 * the same ("Disconnect all applications"). Both are announced on the revocation feed and audited.
 */
const PASSWORD = 'correct horse battery' // createParty's
const NEW_PASSWORD = 'a new and longer password'
let t: TestApp
let rs: ResourceServerCredentials
let stream: string
const feed = eventLog(() => ({ t, rs, stream }))

beforeAll(async () => {
  t = await buildTestApp({ clock: createTestClock(), env: { SIGN_IN_RATE_LIMIT: '100000' } })
  rs = await createResourceServer(t)
  stream = await createStream(t, rs)
})
afterAll(async () => t.close())

/** Two applications the user connected, each with live tokens. */
async function userWithTwoApps(): Promise<{
  party: Party
  other: Party
  tokens: TokenBody[]
  email: string
}> {
  const party = await createParty(t)
  const user = await t.database.db
    .selectFrom('users')
    .select('email')
    .where('id', '=', party.userId)
    .executeTakeFirstOrThrow()
  // A second application connected by the same user.
  const second = await createParty(t)
  await t.database.db
    .updateTable('grants')
    .set({ user_id: party.userId })
    .where('id', '=', second.grant.id)
    .execute()
  const other = { ...second, userId: party.userId }
  const tokens = [await exchangeCode(t, party), await exchangeCode(t, other)]
  for (const tk of tokens) expect((await introspect(t, rs, tk.access_token)).active).toBe(true)
  return { party, other, tokens, email: user.email }
}

async function expectDisconnected(parties: Party[], tokens: TokenBody[]) {
  for (const tk of tokens) expect(await introspect(t, rs, tk.access_token)).toEqual({ active: false })
  for (const [i, tk] of tokens.entries()) {
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tk.refresh_token,
      client_id: parties[i]!.client.id,
    })
    expect(res.json().error).toBe('invalid_grant')
  }
  const live = await t.database.db
    .selectFrom('grants')
    .select('id')
    .where('user_id', '=', parties[0]!.userId)
    .where('revoked_at', 'is', null)
    .execute()
  expect(live).toEqual([])
}

async function auditOf(userId: string, types: string) {
  const res = await t.admin.inject({
    method: 'GET',
    url: `/admin/audit?user_id=${userId}&type=${types}`,
    headers: adminHeaders,
  })
  expect(res.statusCode).toBe(200)
  return res.json().events as { type: string; details: Record<string, unknown> }[]
}

/** Disconnected, every revocation on the feed, a grant.revoked row each and the password row's count. */
async function expectDisconnectedEverywhere(
  parties: Party[],
  tokens: TokenBody[],
  type: 'password.reset' | 'password.changed',
  reason: string,
) {
  await expectDisconnected(parties, tokens)
  const events = await feed.newEvents()
  for (const tk of tokens) expect(revokes(events, tk.access_token)).toBe(true)
  const audit = await auditOf(parties[0]!.userId, `${type},grant.revoked`)
  expect(audit.filter((e) => e.type === 'grant.revoked').map((e) => e.details.reason)).toEqual(
    tokens.map(() => reason),
  )
  expect(audit.find((e) => e.type === type)?.details).toMatchObject({ apps_disconnected: tokens.length })
}

describe('a password reset', () => {
  it('revokes every grant of the user, announces it on the feed, and audits it', async () => {
    const { party, other, tokens } = await userWithTwoApps()
    await feed.mark()
    const link = await t.admin.inject({
      method: 'POST',
      url: `/admin/users/${party.userId}/reset-link`,
      headers: adminHeaders,
    })
    const { pathname, search } = new URL(link.json().url as string)
    const browser = new Browser(t.app)
    const page = await browser.get(pathname + search)
    const res = await browser.post(pathname, {
      csrf_token: hiddenField(page.body, 'csrf_token'),
      token: hiddenField(page.body, 'token'),
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.body).toContain('every application connected to your account is disconnected')
    await expectDisconnectedEverywhere([party, other], tokens, 'password.reset', 'password_reset')
    await expectInvariants(t.database.db)
  })
})

describe('one’s own password change', () => {
  async function change(email: string, fields: Record<string, string>) {
    const browser = new Browser(t.app)
    expect((await browser.signIn(email, PASSWORD)).statusCode).toBe(303)
    const form = await browser.get('/account/password')
    expect(form.body).toContain('Disconnect all applications')
    return browser.post('/account/password', {
      csrf_token: hiddenField(form.body, 'csrf_token'),
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
      ...fields,
    })
  }

  it('with “Disconnect all applications” ticked: every grant revoked, announced and audited', async () => {
    const { party, other, tokens, email } = await userWithTwoApps()
    await feed.mark()
    const res = await change(email, { disconnect_apps: 'yes' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.body).toContain('2 applications were disconnected')
    await expectDisconnectedEverywhere([party, other], tokens, 'password.changed', 'password_changed')
  })

  it('without it: the applications keep working, and the audit row says none was disconnected', async () => {
    const { party, tokens, email } = await userWithTwoApps()
    const res = await change(email, {})
    expect(res.statusCode, res.body).toBe(200)
    for (const tk of tokens) expect((await introspect(t, rs, tk.access_token)).active).toBe(true)
    const audit = await auditOf(party.userId, 'password.changed')
    expect(audit[0]?.details).toMatchObject({ apps_disconnected: 0 })
  })
})
