import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { findAuthorizationCode } from '../../src/grants/authorization-code.repository.js'
import { sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { CHALLENGE, countRows, REDIRECT_URI, seed } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { createParty } from '../helpers/fixtures.js'

const clock = createTestClock(new Date('2026-03-01T10:00:00.000Z'))
let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
beforeAll(async () => {
  t = await buildTestApp({ clock })
  s = await seed(t)
})
afterAll(async () => t.close())
beforeEach(async () => {
  await t.database.db.deleteFrom('authorization_codes').execute()
  await t.database.db.deleteFrom('grants').execute()
})

const request = (scopes: string[]) => ({
  userId: s.user.id,
  clientId: s.client.id,
  redirectUri: REDIRECT_URI,
  scopes,
  codeChallenge: CHALLENGE,
})

describe('grant service: the code contract the token endpoint relies on', () => {
  it('approveAndIssueCode refuses a disabled client and writes nothing', async () => {
    const party = await createParty(t)
    await t.database.db.deleteFrom('grants').execute()
    await t.services.clients.disableClient(party.client.id)
    await expect(
      t.services.grants.approveAndIssueCode({ ...request(['links:read']), clientId: party.client.id }),
    ).rejects.toMatchObject({ code: 'invalid_client' })
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('approveAndIssueCode stores only sha256(code), bound to the grant, expiring after AUTH_CODE_TTL', async () => {
    const issued = await t.services.grants.approveAndIssueCode(request(['links:read']))
    expect(issued.code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(issued.expiresAt.getTime()).toBe(clock.now().getTime() + 60_000)
    const stored = await findAuthorizationCode(t.database.db, sha256(issued.code))
    expect(stored).toMatchObject({
      grantId: issued.grantId,
      clientId: s.client.id,
      userId: s.user.id,
      redirectUri: REDIRECT_URI,
      scopes: ['links:read'],
      codeChallenge: CHALLENGE,
      consumedAt: null,
      expiresAt: issued.expiresAt,
    })
    expect(await findAuthorizationCode(t.database.db, issued.code)).toBeUndefined()
  })

  it('issueCodeUnderLiveGrant issues only within the live grant', async () => {
    expect(await t.services.grants.issueCodeUnderLiveGrant(request(['links:read']))).toBeUndefined()
    await t.services.grants.approveAndIssueCode(request(['links:read']))
    expect(await t.services.grants.issueCodeUnderLiveGrant(request(['links:read']))).toBeDefined()
    expect(
      await t.services.grants.issueCodeUnderLiveGrant(request(['links:read', 'links:write'])),
    ).toBeUndefined()
    await t.services.grants.revokeAllForClient(s.client.id)
    expect(await t.services.grants.issueCodeUnderLiveGrant(request(['links:read']))).toBeUndefined()
  })

  it("joins the caller's transaction: a rollback leaves neither grant nor code", async () => {
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await t.services.grants.approveAndIssueCode(request(['links:read']), trx)
        throw new Error('later step failed')
      }),
    ).rejects.toThrow('later step failed')
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })
})
