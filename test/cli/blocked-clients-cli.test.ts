import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { cliAgainst } from '../helpers/cli.js'

let t: TestApp
let adminUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => t.close())

const cli = cliAgainst(() => adminUrl)
const URL_ID = 'https://agent.example/oauth/client.json'

describe('linkauth clients block / blocked / unblock', () => {
  it('blocks a client_id URL with a reason, lists it, unblocks it; refuses a malformed one', async () => {
    const blocked = await cli(['clients', 'block', URL_ID, '--reason', 'look-alike name'])
    expect(blocked.code).toBe(0)
    expect(blocked.out).toContain(`blocked ${URL_ID}`)
    const list = await cli(['clients', 'blocked'])
    expect(list.out).toMatch(
      new RegExp(`${URL_ID.replace(/[./]/g, '\\$&')}\\s+since .*\\(look-alike name\\)`),
    )
    const rows = await t.database.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('client_id', '=', URL_ID)
      .execute()
    expect(rows.map((r) => r.event_type)).toEqual(['client.blocked'])

    expect((await cli(['clients', 'unblock', URL_ID])).code).toBe(0)
    expect((await cli(['clients', 'blocked'])).out).toContain('no blocked client_id URLs')
    const again = await cli(['clients', 'unblock', URL_ID])
    expect(again.code).toBe(1)
    const bad = await cli(['clients', 'block', 'http://agent.example/x'])
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('must be an https URL')
  })
})
