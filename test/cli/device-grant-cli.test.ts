import { afterAll, beforeAll, expect, it } from 'vitest'
import { DEVICE_CODE_GRANT_TYPE } from '../../src/clients/grant-types.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { cliAgainst } from '../helpers/cli.js'
import { startDevice } from '../device/device-helpers.js'

/**
 * `linkauth clients create/update --grant-type`: the operator allows a client the device grant (RFC
 * 8628) or takes it away, and a device-only client needs no redirect URI.
 */
let t: TestApp
let adminUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => t.close())

const cli = cliAgainst(() => adminUrl)
const deviceStart = async (clientId: string) => {
  const res = await startDevice(t, { client_id: clientId, scope: 'links:read' })
  return res.statusCode === 200 ? 'started' : res.json<{ error: string }>().error
}

it('creates a device-only client without a redirect URI; it can start the device grant', async () => {
  const created = await cli([
    'clients',
    'create',
    '--name',
    'Links CLI',
    '--grant-type',
    DEVICE_CODE_GRANT_TYPE,
    '--grant-type',
    'refresh_token',
  ])
  expect(created.code, created.err).toBe(0)
  expect(created.out).toContain('redirect_uris: (none: no redirect flow)')
  expect(created.out).toContain(`grant_types:   refresh_token ${DEVICE_CODE_GRANT_TYPE}`)
  const clientId = /client_id: +(\S+)/.exec(created.out)![1]!
  expect(await deviceStart(clientId)).toBe('started')
})

it('refuses a client of the redirect flow without a redirect URI, naming the field', async () => {
  const refused = await cli(['clients', 'create', '--name', 'Web app'])
  expect(refused.code).not.toBe(0)
  expect(refused.err).toContain('redirect_uris')
  expect(
    await t.database.db.selectFrom('clients').where('name', '=', 'Web app').selectAll().execute(),
  ).toEqual([])
})

it('gives an existing client the device grant with update --grant-type, and takes it away', async () => {
  const created = await cli([
    'clients',
    'create',
    '--name',
    'Web app',
    '--redirect-uri',
    'https://web.example/cb',
    '--json',
  ])
  const clientId = (JSON.parse(created.out) as { client_id: string }).client_id
  expect(await deviceStart(clientId)).toBe('unauthorized_client')

  const widened = await cli([
    'clients',
    'update',
    clientId,
    '--grant-type',
    'authorization_code',
    '--grant-type',
    'refresh_token',
    '--grant-type',
    DEVICE_CODE_GRANT_TYPE,
    '--json',
  ])
  expect(widened.code, widened.err).toBe(0)
  expect(JSON.parse(widened.out).grant_types).toEqual([
    'authorization_code',
    'refresh_token',
    DEVICE_CODE_GRANT_TYPE,
  ])
  expect(await deviceStart(clientId)).toBe('started')

  const narrowed = await cli(['clients', 'update', clientId, '--grant-type', 'authorization_code'])
  expect(narrowed.code).toBe(0)
  expect(await deviceStart(clientId)).toBe('unauthorized_client')

  const unknown = await cli(['clients', 'update', clientId, '--grant-type', 'password'])
  expect(unknown.code).not.toBe(0)
  expect(unknown.err).toContain('grant_types')
})
