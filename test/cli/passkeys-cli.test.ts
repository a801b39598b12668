import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { cliAgainst } from '../helpers/cli.js'
import {
  assertionResponse,
  createSoftCredential,
  registrationResponse,
} from '../helpers/software-authenticator.js'

/**
 * `linkauth users passkeys` and `users remove-passkey` against a real admin listener: passkeys
 * registered through the account pages with the software authenticator, listed and removed by the
 * CLI, and its answers for an unknown user, an unknown passkey and wrong usage.
 */

const ORIGIN = 'http://localhost:3000'

let t: TestApp
let adminUrl: string
beforeAll(async () => {
  t = await buildTestApp({ env: { ...GENEROUS_LIMITS } })
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => t?.close())

const cli = cliAgainst(() => adminUrl)

/** A user with one passkey per name, registered through /account/passkeys as a browser would. */
async function userWithPasskeys(names: string[]) {
  const s = await seed(t)
  const browser = new Browser(t.app)
  expect((await browser.signIn(s.email, PASSWORD)).statusCode).toBe(303)
  const csrf = hiddenField((await browser.get('/account/passkeys')).body, 'csrf_token')
  const credentials = []
  for (const name of names) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/account/passkeys/options',
      headers: { cookie: browser.jar.header(), 'content-type': 'application/json', 'x-csrf-token': csrf },
      payload: '{}',
    })
    expect(res.statusCode).toBe(200)
    const credential = createSoftCredential('localhost', s.user.id)
    const added = await browser.post('/account/passkeys', {
      csrf_token: csrf,
      name,
      response: registrationResponse(credential, res.json().challenge, { origin: ORIGIN }),
    })
    expect(added.statusCode).toBe(303)
    credentials.push(credential)
  }
  return { ...s, credentials }
}

/** Whether a passkey still signs in, through the sign-in page's own ceremony. */
async function signsIn(credential: ReturnType<typeof createSoftCredential>): Promise<boolean> {
  const browser = new Browser(t.app)
  const csrf = hiddenField((await browser.get('/login')).body, 'csrf_token')
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/passkeys/sign-in-options',
    headers: { cookie: browser.jar.header(), 'content-type': 'application/json', 'x-csrf-token': csrf },
    payload: '{}',
  })
  browser.jar.store(res)
  const signed = await browser.post('/login/passkey', {
    csrf_token: csrf,
    response: assertionResponse(credential, res.json().challenge, { origin: ORIGIN }),
  })
  return signed.statusCode === 303
}

describe('linkauth users passkeys', () => {
  it("lists a user's passkeys by email (any case) or id, with password sign-in's state; --json", async () => {
    const s = await userWithPasskeys(['Laptop', 'Phone'])
    const [laptop, phone] = await t.services.passkeys.list(s.user.id)

    const byEmail = await cli(['users', 'passkeys', '--email', s.email.toUpperCase()])
    expect(byEmail).toMatchObject({ code: 0, err: '' })
    const lines = byEmail.out.split('\n')
    expect(lines[0]).toMatch(/^ID\s+NAME\s+KIND\s+CREATED_AT\s+LAST_USED_AT$/)
    expect(lines[1]).toMatch(new RegExp(`^${laptop!.id}\\s+Laptop\\s+synced\\s+\\S+Z\\s+never$`))
    expect(lines[2]).toMatch(new RegExp(`^${phone!.id}\\s+Phone\\s+synced`))
    expect(lines.at(-1)).toBe('password sign-in: on')

    const byId = await cli(['users', 'passkeys', '--id', s.user.id, '--json'])
    expect(byId.code).toBe(0)
    const json = JSON.parse(byId.out)
    expect(json.password_sign_in).toBe(true)
    expect(json.passkeys.map((p: { id: string; name: string }) => [p.id, p.name])).toEqual([
      [laptop!.id, 'Laptop'],
      [phone!.id, 'Phone'],
    ])
    // No key material on the operator's screen.
    expect(byId.out).not.toMatch(/public_key|credential/)

    // Used once: its last use shows; passwordless: said so.
    expect(await signsIn(s.credentials[0]!)).toBe(true)
    await t.services.passkeys.setPasswordSignIn(s.user.id, false)
    const after = await cli(['users', 'passkeys', '--id', s.user.id])
    expect(after.out.split('\n')[1]).not.toMatch(/never$/)
    expect(after.out.split('\n').at(-1)).toBe('password sign-in: off (passkeys only)')
  })

  it('says so for a user without passkeys', async () => {
    const s = await seed(t)
    const res = await cli(['users', 'passkeys', '--email', s.email])
    expect(res).toEqual({ code: 0, out: 'no passkeys\npassword sign-in: on', err: '' })
  })

  it('answers an unknown user, a malformed id and wrong usage with an error and no output', async () => {
    const unknownEmail = await cli(['users', 'passkeys', '--email', 'nobody-here@example.com'])
    expect(unknownEmail).toEqual({
      code: 1,
      out: '',
      err: 'linkauth: no user has the email nobody-here@example.com',
    })
    const unknownId = await cli(['users', 'passkeys', '--id', randomUUID()])
    expect(unknownId.code).toBe(1)
    expect(unknownId.out).toBe('')
    expect(unknownId.err).toBe('linkauth: the server refused (404): No user with this id.')
    const malformed = await cli(['users', 'passkeys', '--id', 'not-a-uuid'])
    expect(malformed.code).toBe(1)
    expect(malformed.err).toContain('the server refused (400)')
    expect(malformed.err).toContain('UUID')

    const neither = await cli(['users', 'passkeys'])
    expect(neither.code).toBe(2)
    expect(neither.err).toContain('give either --email or the user id')
    const both = await cli(['users', 'passkeys', '--email', 'a@example.com', '--id', randomUUID()])
    expect(both.code).toBe(2)
  })
})

describe('linkauth users remove-passkey', () => {
  it('removes one passkey (it signs in no more, the other still does), audited as the operator', async () => {
    const s = await userWithPasskeys(['Lost phone', 'Laptop'])
    const [lost] = await t.services.passkeys.list(s.user.id)
    // The account is passwordless: the operator may still take its passkey away (a lost device).
    await t.services.passkeys.setPasswordSignIn(s.user.id, false)

    const removed = await cli(['users', 'remove-passkey', s.user.id, lost!.id])
    expect(removed).toEqual({ code: 0, out: `removed passkey ${lost!.id}`, err: '' })
    expect((await t.services.passkeys.list(s.user.id)).map((p) => p.name)).toEqual(['Laptop'])
    expect(await signsIn(s.credentials[0]!)).toBe(false)
    expect(await signsIn(s.credentials[1]!)).toBe(true)
    const listed = await cli(['users', 'passkeys', '--id', s.user.id])
    expect(listed.out).not.toContain('Lost phone')

    const { events } = await t.services.audit.list({
      userId: s.user.id,
      eventTypes: ['passkey.removed'],
      limit: 5,
    })
    expect(events.map((e) => [e.actorKind, e.details.name])).toEqual([['operator', 'Lost phone']])

    const [laptop] = await t.services.passkeys.list(s.user.id)
    const json = await cli(['users', 'remove-passkey', s.user.id, laptop!.id, '--json'])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.out)).toEqual({ user_id: s.user.id, passkey_id: laptop!.id })
    expect(await t.services.passkeys.list(s.user.id)).toEqual([])
  })

  it('answers an unknown passkey, another user’s passkey, an unknown user and wrong usage with an error', async () => {
    const owner = await userWithPasskeys(['Laptop'])
    const other = await seed(t)
    const [passkey] = await t.services.passkeys.list(owner.user.id)

    const again = await cli(['users', 'remove-passkey', owner.user.id, randomUUID()])
    expect(again).toEqual({
      code: 1,
      out: '',
      err: 'linkauth: the server refused (404): This user has no passkey with this id.',
    })
    // Another user's id with this passkey: nothing removed.
    const wrongUser = await cli(['users', 'remove-passkey', other.user.id, passkey!.id])
    expect(wrongUser.code).toBe(1)
    expect(wrongUser.err).toContain('(404): This user has no passkey with this id.')
    const unknownUser = await cli(['users', 'remove-passkey', randomUUID(), passkey!.id])
    expect(unknownUser.code).toBe(1)
    expect(unknownUser.err).toContain('(404)')
    expect(await t.services.passkeys.list(owner.user.id)).toHaveLength(1)

    const malformed = await cli(['users', 'remove-passkey', owner.user.id, 'lost-phone'])
    expect(malformed.code).toBe(1)
    expect(malformed.err).toContain('the server refused (400)')
    expect(malformed.err).toContain('passkey id')

    const missing = await cli(['users', 'remove-passkey', owner.user.id])
    expect(missing.code).toBe(2)
    expect(missing.err).toContain('expected USER_ID PASSKEY_ID')
    expect(await t.services.passkeys.list(owner.user.id)).toHaveLength(1)
    expect(await signsIn(owner.credentials[0]!)).toBe(true)
  })
})
