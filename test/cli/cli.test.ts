import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import { adminUrl as adminUrlFrom } from '../../src/cli/admin-client.js'
import { cliAgainst } from '../helpers/cli.js'
import { freePort } from '../helpers/net.js'

const execFileAsync = promisify(execFile)

let t: TestApp
let adminUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await t.close()
})

const cli = cliAgainst(() => adminUrl)

describe('linkauth CLI against a live admin API', () => {
  it('creates, lists, shows and disables a client', async () => {
    const created = await cli([
      'clients',
      'create',
      '--name',
      'CLI App',
      '--redirect-uri',
      'https://cli.example/cb',
      '--redirect-uri',
      'http://127.0.0.1:9000/cb',
      '--scope',
      'links:read',
      '--json',
    ])
    expect(created.code).toBe(0)
    const client = JSON.parse(created.out)
    expect(client).toMatchObject({
      name: 'CLI App',
      redirect_uris: ['https://cli.example/cb', 'http://127.0.0.1:9000/cb'],
      scopes: ['links:read'],
    })

    const list = await cli(['clients', 'list'])
    expect(list.code).toBe(0)
    expect(list.out).toMatch(new RegExp(`${client.client_id}\\s+CLI App\\s+registered/verified\\s+active`))

    const shown = await cli(['clients', 'show', client.client_id])
    expect(shown.out).toContain(`client_id:     ${client.client_id}`)
    expect(shown.out).toContain('standing:      registered/verified')
    expect(shown.out).toContain('host:          cli.example, 127.0.0.1:9000')

    // The operator takes its standing away, then gives it back: the CLI shows each.
    const unverified = await cli(['clients', 'unverify', client.client_id])
    expect(unverified.out).toBe(`${client.client_id} is now registered/unverified (operator)`)
    expect((await cli(['clients', 'list'])).out).toMatch(
      new RegExp(`${client.client_id}\\s+CLI App\\s+registered/unverified \\(operator\\)`),
    )
    expect((await cli(['clients', 'verify', client.client_id])).out).toBe(
      `${client.client_id} is now registered/verified (operator)`,
    )
    expect((await cli(['clients', 'reset-standing', client.client_id])).out).toBe(
      `${client.client_id} is now registered/verified`,
    )

    const disabled = await cli(['clients', 'disable', client.client_id, '--json'])
    expect(disabled.code).toBe(0)
    expect(JSON.parse(disabled.out).disabled_at).not.toBeNull()
  })

  it('sets, changes and clears the default scopes a request without scope gets', async () => {
    const created = await cli([
      'clients',
      'create',
      '--name',
      'Defaults App',
      '--redirect-uri',
      'https://defaults.example/cb',
      '--scope',
      'links:read',
      '--scope',
      'links:write',
      '--default-scope',
      'links:read',
      '--json',
    ])
    expect(created.code, created.err).toBe(0)
    const client = JSON.parse(created.out)
    expect(client.default_scopes).toEqual(['links:read'])
    expect((await cli(['clients', 'show', client.client_id])).out).toContain('default_scopes: links:read')

    const changed = await cli([
      'clients',
      'update',
      client.client_id,
      '--default-scope',
      'links:write',
      '--json',
    ])
    expect(JSON.parse(changed.out).default_scopes).toEqual(['links:write'])
    const outside = await cli(['clients', 'update', client.client_id, '--default-scope', 'products:sync'])
    expect(outside.code).toBe(1)
    expect(outside.err).toContain('default_scopes must be among')
    const cleared = await cli(['clients', 'update', client.client_id, '--clear', 'default-scopes', '--json'])
    expect(cleared.code, cleared.err).toBe(0)
    expect(JSON.parse(cleared.out).default_scopes).toEqual(['links:read', 'links:write'])
  })

  it('takes an id that starts with - as the id, not as a flag (base64url ids can)', async () => {
    const created = await cli([
      'clients',
      'create',
      '--name',
      '-dash app',
      '--redirect-uri',
      'https://dash.example/cb',
      '--json',
    ])
    expect(created.code, created.err).toBe(0)
    const client = JSON.parse(created.out)
    expect(client.name).toBe('-dash app')
    // An id that starts with '-' and is not this client's (which may itself start with '-': 1 in 64).
    const id = client.client_id as string
    const dashed = id.startsWith('-') ? `-${id[1] === 'A' ? 'B' : 'A'}${id.slice(2)}` : `-${id.slice(1)}`
    for (const args of [
      ['clients', 'show', dashed],
      ['clients', 'show', '--json', dashed],
      ['clients', 'show', '--', dashed],
    ]) {
      const shown = await cli(args)
      // Reaching the server (which knows no such client) proves the id was read as the id.
      expect(shown.err).toContain('(404)')
      expect(shown.code).toBe(1)
    }
    // The real id, wherever it stands among the options.
    const shown = await cli(['clients', 'show', '--json', client.client_id])
    expect(JSON.parse(shown.out).client_id).toBe(client.client_id)
  })

  it('creates users and resource servers, and prints the secret once', async () => {
    const user = await cli([
      'users',
      'create',
      '--email',
      'cli@example.com',
      '--password',
      'password-123',
      '--json',
    ])
    expect(user.code).toBe(0)
    expect(JSON.parse(user.out).email).toBe('cli@example.com')
    const rs = await cli(['resource-servers', 'create', '--name', 'Links API'])
    expect(rs.code).toBe(0)
    expect(rs.out).toMatch(/^id: +rs_/m)
    expect(rs.out).toMatch(/^secret: +[A-Za-z0-9_-]{43}$/m)
  })

  it('registers a resource server with its resource and scopes, and lists it', async () => {
    const created = await cli([
      'resource-servers',
      'create',
      '--name',
      'Shop API',
      '--resource',
      'https://shop.cli.example/api',
      '--scope',
      'products:sync',
      '--scope',
      'ecommerce:write',
      '--json',
    ])
    expect(created.code, created.err).toBe(0)
    const server = JSON.parse(created.out)
    expect(server).toMatchObject({
      name: 'Shop API',
      resource: 'https://shop.cli.example/api',
      scopes: ['ecommerce:write', 'products:sync'],
    })
    const shown = await cli([
      'resource-servers',
      'create',
      '--name',
      'Links API',
      '--resource',
      'http://127.0.0.1:4000/links',
      '--scope',
      'links:read',
    ])
    expect(shown.out).toMatch(/^resource: http:\/\/127\.0\.0\.1:4000\/links$/m)
    expect(shown.out).toMatch(/^scopes: +links:read$/m)

    const list = await cli(['resource-servers', 'list'])
    expect(list.code).toBe(0)
    expect(list.out).toMatch(
      new RegExp(
        `${server.id}\\s+Shop API\\s+https://shop\\.cli\\.example/api\\s+ecommerce:write products:sync`,
      ),
    )
    expect(list.out).not.toContain(server.secret)
    const json = JSON.parse((await cli(['resource-servers', 'list', '--json'])).out)
    expect(json.resource_servers).toContainEqual(
      expect.objectContaining({ id: server.id, scopes: server.scopes }),
    )

    const taken = await cli([
      'resource-servers',
      'create',
      '--name',
      'Again',
      '--resource',
      'https://shop.cli.example/api',
      '--scope',
      'links:read',
    ])
    expect(taken.code).toBe(1)
    expect(taken.err).toContain(
      'the server refused (409): resource: another resource server has this resource',
    )
    const bad = await cli(['resource-servers', 'create', '--name', 'X', '--resource', 'http://api.example/'])
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('(400)')
    const help = await cli(['resource-servers', 'create', '--help'])
    expect(help.code).toBe(0)
    expect(help.out).toContain('--resource VALUE')
    expect(help.out).toContain('--scope VALUE (repeatable)')
  })

  it('exits 1 with the server’s reason when the server refuses', async () => {
    const bad = await cli(['clients', 'create', '--name', 'X', '--redirect-uri', 'http://evil.example/cb'])
    expect(bad.code).toBe(1)
    expect(bad.err).toContain(
      'the server refused (400): redirect_uris.0: http is allowed only on loopback hosts',
    )
    const dup = await cli(['users', 'create', '--email', 'CLI@example.com', '--password', 'password-123'])
    expect(dup.code).toBe(1)
    expect(dup.err).toContain('409')
  })

  it('says clearly when the token is wrong or missing', async () => {
    const wrong = await cli(['clients', 'list'], { ADMIN_TOKEN: 'wrong-token' })
    expect(wrong.code).toBe(1)
    expect(wrong.err).toContain('refused the admin token (401)')
    const none = await cli(['clients', 'list'], { ADMIN_TOKEN: '' })
    expect(none.code).toBe(2)
    expect(none.err).toContain('no admin token')
  })

  it('says clearly when the server is unreachable', async () => {
    // A port nothing listens on now, whatever else runs on this machine.
    const closed = await freePort()
    const down = await cli(['clients', 'list'], { LINKAUTH_ADMIN_URL: `http://127.0.0.1:${closed}` })
    expect(down.code).toBe(1)
    expect(down.err).toMatch(
      new RegExp(`cannot reach the admin API at http://127\\.0\\.0\\.1:${closed} .*is linkauth running\\?`),
    )
  })

  it('without LINKAUTH_ADMIN_URL, asks the admin API where the server’s own ADMIN_HOST and ADMIN_PORT put it', async () => {
    const { hostname, port } = new URL(adminUrl)
    const found = await cli(['clients', 'list', '--json'], {
      LINKAUTH_ADMIN_URL: '',
      ADMIN_HOST: hostname,
      ADMIN_PORT: port,
    })
    expect(found.code, found.err).toBe(0)
    expect(() => JSON.parse(found.out) as unknown).not.toThrow()
    // A server listening on every address is reached on loopback; IPv6 literals get their brackets.
    const closed = String(await freePort())
    const wildcard = await cli(['clients', 'list'], {
      LINKAUTH_ADMIN_URL: '',
      ADMIN_HOST: '0.0.0.0',
      ADMIN_PORT: closed,
    })
    expect(wildcard.err).toContain(`cannot reach the admin API at http://127.0.0.1:${closed} `)
    // Only where the CLI would go: a server of this machine on the default port (the README's own
    // `npm start`) must not change what the test sees.
    expect(adminUrlFrom({ ADMIN_HOST: '::1', ADMIN_PORT: closed })).toBe(`http://[::1]:${closed}`)
    expect(adminUrlFrom({ ADMIN_HOST: '::', ADMIN_PORT: closed })).toBe(`http://127.0.0.1:${closed}`)
    expect(adminUrlFrom({ LINKAUTH_ADMIN_URL: '' })).toBe('http://127.0.0.1:3001')
  })

  it('exits 2 on wrong usage and 0 on --help', async () => {
    expect((await cli(['clients', 'create', '--redirect-uri', 'https://x.example/cb'])).code).toBe(2) // no --name
    expect((await cli(['clients', 'create', '--bogus'])).code).toBe(2)
    expect((await cli(['clients', 'show'])).code).toBe(2)
    expect((await cli(['frobnicate'])).code).toBe(2)
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    expect(help.out).toContain('clients create')
    const sub = await cli(['clients', 'create', '--help'])
    expect(sub.code).toBe(0)
    expect(sub.out).toContain('--redirect-uri')
  })

  it('runs as a process with the right exit code (npm run cli)', async () => {
    const env = { ...process.env, LINKAUTH_ADMIN_URL: adminUrl, ADMIN_TOKEN: TEST_ADMIN_TOKEN }
    const ok = await execFileAsync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'clients', 'list', '--json'],
      {
        env,
      },
    )
    expect(JSON.parse(ok.stdout).clients.length).toBeGreaterThan(0)
    const usage = await execFileAsync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'nope'], {
      env,
    }).catch((e: { code: number; stderr: string }) => e)
    expect((usage as { code: number }).code).toBe(2)
  })
})
