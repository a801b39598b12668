import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { basicAuth, introspectRequest } from '../helpers/tokens.js'
import { cliAgainst } from '../helpers/cli.js'

/** clients update/enable and the resource-servers lifecycle commands, against a live admin API. */
let t: TestApp
let adminUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => t.close())

const runAgainst = cliAgainst(() => adminUrl)
const cli = (...args: string[]) => runAgainst(args)

const introspectionStatus = async (id: string, secret: string) =>
  (await introspectRequest(t, { token: 'x' }, basicAuth(id, secret))).statusCode

describe('linkauth clients update / enable', () => {
  it('changes only what is given, prints what narrowing did, and enables a disabled client', async () => {
    const created = JSON.parse(
      (
        await cli(
          'clients',
          'create',
          '--name',
          'CLI Life',
          '--redirect-uri',
          'https://life.example/cb',
          '--json',
        )
      ).out,
    )
    const id = created.client_id as string
    const updated = await cli(
      'clients',
      'update',
      id,
      '--description',
      'Tidy links.',
      '--homepage-url',
      'https://life.example/',
      '--scope',
      'links:read',
      '--json',
    )
    expect(updated.code, updated.err).toBe(0)
    expect(JSON.parse(updated.out)).toMatchObject({
      name: 'CLI Life',
      redirect_uris: ['https://life.example/cb'],
      scopes: ['links:read'],
      description: 'Tidy links.',
      homepage_url: 'https://life.example/',
      narrowed: { grants_revoked: 0, refresh_families_revoked: 0 },
    })
    const text = await cli('clients', 'update', id, '--name', 'CLI Life 2', '--clear', 'homepage-url')
    expect(text.code, text.err).toBe(0)
    expect(text.out).toMatch(/^name: +CLI Life 2$/m)
    expect(text.out).toMatch(/^description: +Tidy links\.$/m)
    expect(text.out).not.toContain('homepage_url')

    const bad = await cli('clients', 'update', id, '--terms-url', 'http://life.example/terms')
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('the server refused (400): terms_url: must be an https URL')
    const badClear = await cli('clients', 'update', id, '--clear', 'name')
    expect(badClear.code).toBe(1)
    expect((await cli('clients', 'update', 'AAAAAAAAAAAAAAAAAAAAAA', '--name', 'x')).err).toContain('(404)')
    expect((await cli('clients', 'update', id)).code).toBe(1) // nothing to change: the server says so

    expect((await cli('clients', 'disable', id)).code).toBe(0)
    const enabled = await cli('clients', 'enable', id)
    expect(enabled.code, enabled.err).toBe(0)
    expect(enabled.out).toBe(`enabled ${id}; users authorize it again`)
    expect(JSON.parse((await cli('clients', 'show', id, '--json')).out).disabled_at).toBeNull()
  })

  it('has --help for both', async () => {
    const help = await cli('clients', 'update', '--help')
    expect(help.code).toBe(0)
    for (const option of [
      '--name',
      '--redirect-uri',
      '--scope',
      '--description',
      '--homepage-url',
      '--clear',
    ])
      expect(help.out).toContain(option)
    expect((await cli('clients', 'enable', '--help')).out).toContain(
      'Usage: linkauth clients enable CLIENT_ID',
    )
    expect((await cli('clients', 'enable')).code).toBe(2)
  })
})

describe('linkauth resource-servers …', () => {
  it('show, update, disable, enable, rotate-secret, delete', async () => {
    const created = JSON.parse(
      (
        await cli(
          'resource-servers',
          'create',
          '--name',
          'Life API',
          '--resource',
          'https://life-api.cli.example/',
          '--scope',
          'links:read',
          '--json',
        )
      ).out,
    )
    const id = created.id as string
    const shown = await cli('resource-servers', 'show', id)
    expect(shown.out).toMatch(/^status: +enabled$/m)
    expect(shown.out).not.toContain(created.secret)

    const updated = await cli(
      'resource-servers',
      'update',
      id,
      '--name',
      'Life API v2',
      '--scope',
      'links:write',
      '--json',
    )
    expect(JSON.parse(updated.out)).toMatchObject({ name: 'Life API v2', scopes: ['links:write'] })

    expect((await cli('resource-servers', 'disable', id)).out).toMatch(new RegExp(`^disabled ${id} at `))
    expect(await introspectionStatus(id, created.secret)).toBe(401)
    expect((await cli('resource-servers', 'list')).out).toMatch(new RegExp(`${id}.*disabled$`, 'm'))
    expect((await cli('resource-servers', 'enable', id)).out).toBe(`enabled ${id}`)
    expect(await introspectionStatus(id, created.secret)).toBe(200)

    const rotated = await cli('resource-servers', 'rotate-secret', id, '--overlap-seconds', '600')
    expect(rotated.code, rotated.err).toBe(0)
    const secret = /^secret: +(\S+)$/m.exec(rotated.out)![1]!
    expect(rotated.out).toMatch(/^old secret: works until \d{4}-/m)
    expect(await introspectionStatus(id, secret)).toBe(200)
    expect(await introspectionStatus(id, created.secret)).toBe(200)
    const atOnce = JSON.parse(
      (await cli('resource-servers', 'rotate-secret', id, '--overlap-seconds', '0', '--json')).out,
    )
    expect(atOnce.previous_secret_expires_at).toBeNull()
    expect(await introspectionStatus(id, secret)).toBe(401)
    expect(await introspectionStatus(id, atOnce.secret)).toBe(200)
    const bad = await cli('resource-servers', 'rotate-secret', id, '--overlap-seconds', 'an hour')
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('(400): overlap_seconds:')

    const deleted = await cli('resource-servers', 'delete', id)
    expect(deleted.code, deleted.err).toBe(0)
    expect(deleted.out).toContain(`deleted ${id} (Life API v2); 0 token families revoked`)
    expect((await cli('resource-servers', 'show', id)).err).toContain('(404)')
  })

  it('has --help for each and refuses a missing id', async () => {
    for (const action of ['show', 'update', 'disable', 'enable', 'delete', 'rotate-secret']) {
      const help = await cli('resource-servers', action, '--help')
      expect(help.code).toBe(0)
      expect(help.out).toContain(`Usage: linkauth resource-servers ${action} ID`)
      expect(help.out).toContain('--json')
      expect((await cli('resource-servers', action)).code).toBe(2)
    }
    expect((await cli('resource-servers', 'rotate-secret', '--help')).out).toContain(
      '--overlap-seconds VALUE',
    )
    expect((await cli('--help')).out).toContain('resource-servers rotate-secret')
  })
})
