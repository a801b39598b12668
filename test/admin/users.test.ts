import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createParty, exchangeCode, tokenRequest } from '../helpers/fixtures.js'
import { cliAgainst } from '../helpers/cli.js'

/** GET /admin/users paged and searched, PATCH /admin/users/:id, and their CLI (issue 18). */
let t: TestApp
let adminUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
  for (const email of ['ann@shop.example', 'Anna@Shop.example', 'bob@shop.example', 'a_b%c@other.example'])
    await t.services.users.createUser({ email, password: 'correct horse battery' })
})
afterAll(async () => t.close())

const get = (url: string) => t.admin.inject({ method: 'GET', url, headers: adminHeaders })
const patch = (id: string, payload: unknown) =>
  t.admin.inject({
    method: 'PATCH',
    url: `/admin/users/${id}`,
    headers: adminHeaders,
    payload: payload as object,
  })
const emails = async (query: string) =>
  ((await get(`/admin/users${query}`)).json().users as { email: string }[]).map((u) => u.email)

const cli = cliAgainst(() => adminUrl)

describe('GET /admin/users', () => {
  it('searches by email prefix or part, in any case; LIKE characters match only themselves', async () => {
    expect(await emails('?email_prefix=ANN')).toEqual(['ann@shop.example', 'Anna@Shop.example'])
    expect(await emails('?email_contains=SHOP.EX')).toHaveLength(3)
    expect(await emails('?email_prefix=a_')).toEqual(['a_b%c@other.example'])
    expect(await emails('?email_contains=%25')).toEqual(['a_b%c@other.example'])
    expect(await emails('?email_prefix=a%25')).toEqual([])
  })

  it('pages oldest first with an opaque cursor, without gaps or repeats', async () => {
    const all = await emails('?limit=500')
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res = await get(`/admin/users?limit=1${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.statusCode).toBe(200)
      seen.push(...res.json().users.map((u: { email: string }) => u.email))
      cursor = res.json().next_cursor
    } while (cursor)
    expect(seen).toEqual(all)
    expect(all.length).toBeGreaterThanOrEqual(4)
  })

  it.each([
    ['?limit=0', 'limit'],
    ['?limit=501', 'limit'],
    ['?limit=ten', 'limit'],
    [`?email_prefix=${'a'.repeat(321)}`, 'email_prefix'],
    ['?email_contains=', 'email_contains'],
    ['?cursor=garbage', 'cursor'],
  ])('refuses %s naming the parameter', async (query, field) => {
    const res = await get(`/admin/users${query}`)
    expect(res.statusCode).toBe(400)
    expect(res.json().field).toBe(field)
  })
})

describe('PATCH /admin/users/:id', () => {
  it('changes the email, which then signs in; a taken one (any case) is 409; bad input 400; no user 404', async () => {
    const user = await t.services.users.createUser({
      email: 'carol@example.com',
      password: 'correct horse battery',
    })
    const changed = await patch(user.id, { email: ' Carol.New@example.com ' })
    expect(changed.statusCode, changed.body).toBe(200)
    expect(changed.json()).toMatchObject({ id: user.id, email: 'Carol.New@example.com' })
    expect(await emails('?email_prefix=carol.new')).toEqual(['Carol.New@example.com'])

    const taken = await patch(user.id, { email: 'BOB@shop.example' })
    expect(taken.statusCode).toBe(409)
    expect(taken.json().field).toBe('email')
    for (const [payload, field] of [
      [{ email: 'not an email' }, 'email'],
      [{ email: `${'a'.repeat(320)}@example.com` }, 'email'],
      [{ password: 'x' }, undefined],
      [[], undefined],
    ] as const) {
      const res = await patch(user.id, payload)
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
      expect(res.headers['content-type']).toContain('application/problem+json')
      if (field) expect(res.json().field).toBe(field)
    }
    expect((await patch('00000000-0000-4000-8000-000000000000', { email: 'x@example.com' })).statusCode).toBe(
      404,
    )
    expect((await patch('nope', { email: 'x@example.com' })).statusCode).toBe(400)
    const unauthenticated = await t.admin.inject({
      method: 'PATCH',
      url: `/admin/users/${user.id}`,
      payload: {},
    })
    expect(unauthenticated.statusCode).toBe(401)

    const { events } = (await get(`/admin/audit?user_id=${user.id}&type=user.updated`)).json()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ actor: { kind: 'operator' }, details: { changed: ['email'] } })
  })
})

describe('DELETE /admin/users/:id/apps/:client_id', () => {
  it("revokes the user's grant at once: refresh fails, the audit names the operator; the CLI does it too", async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const res = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/users/${party.userId}/apps/${party.client.id}`,
      headers: adminHeaders,
    })
    expect(res.statusCode).toBe(204)
    const refresh = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.client.id,
    })
    expect(refresh.statusCode).toBe(400)
    const { events } = (await get(`/admin/audit?user_id=${party.userId}&type=grant.revoked`)).json()
    expect(events[0]).toMatchObject({ actor: { kind: 'operator' }, details: { reason: 'operator_revoked' } })

    const other = await createParty(t)
    const cliRevoke = await cli(['users', 'revoke-app', other.userId, other.client.id])
    expect(cliRevoke.code, cliRevoke.err).toBe(0)
    expect(cliRevoke.out).toBe(`revoked the grant of user ${other.userId} to ${other.client.id}`)
    const again = await cli(['users', 'revoke-app', other.userId, other.client.id])
    expect(again.code).toBe(1)
    expect(again.err).toContain('404')
  })
})

describe('the CLI', () => {
  it('users list searches and pages; users update changes the email', async () => {
    const list = await cli(['users', 'list', '--email-prefix', 'ann', '--limit', '1'])
    expect(list.code, list.err).toBe(0)
    expect(list.out).toContain('ann@shop.example')
    const cursor = /more: --cursor (\S+)/.exec(list.out)![1]!
    const next = await cli([
      'users',
      'list',
      '--email-prefix',
      'ann',
      '--limit',
      '1',
      '--cursor',
      cursor,
      '--json',
    ])
    expect(JSON.parse(next.out)).toMatchObject({ users: [{ email: 'Anna@Shop.example' }], next_cursor: null })
    const contains = await cli(['users', 'list', '--email-contains', 'other.example'])
    expect(contains.out).toContain('a_b%c@other.example')

    const bob = JSON.parse((await cli(['users', 'list', '--email-prefix', 'bob', '--json'])).out).users[0]
    const updated = await cli(['users', 'update', bob.id, '--email', 'robert@shop.example'])
    expect(updated.code, updated.err).toBe(0)
    expect(updated.out).toBe(`user ${bob.id} is now robert@shop.example`)
    const refused = await cli(['users', 'update', bob.id, '--email', 'ann@shop.example'])
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('409')
    expect((await cli(['users', 'update', bob.id])).code).toBe(2)
    expect((await cli(['users', 'update', '--help'])).out).toContain('--email')
  })
})
