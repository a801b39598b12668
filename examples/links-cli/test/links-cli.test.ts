import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startScript, waitForOutput } from '../../../test/helpers/server-process.js'
import { EXIT } from '../src/http.js'
import { completeUriIn, linksCliWorld } from './links-cli-world.js'

/**
 * The links CLI against a real linkauth and links API: it finds everything from the API's address
 * (protected-resource metadata, then the authorization server's), registers itself (RFC 7591, no
 * redirect URI), signs in with the device grant approved by a person on /device, and then shortens,
 * lists, shows statistics, refreshes (rotating the refresh token) and logs out (revoking).
 */
const { w, person, approve, user } = linksCliWorld()

const mode = (path: string) => statSync(path).mode & 0o777

async function signedIn() {
  const email = await person()
  const cli = user()
  cli.onSleep(async (n, out) => {
    if (n === 1) await approve(completeUriIn(out), email, 'allow')
  })
  const login = await cli.run(['login'])
  expect(login.code, login.err).toBe(EXIT.OK)
  return { cli, email }
}

/** A refresh at the token endpoint, as the CLI makes it: the answer's status and error. */
async function refreshWith(refreshToken: string, clientId: string) {
  const res = await fetch(`${w.issuer}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }),
  })
  return { status: res.status, error: ((await res.json()) as { error?: string }).error }
}

describe('a session from login to logout', () => {
  it('logs in as a process: shows the code and where, and keeps the tokens in files only its user can read', async () => {
    const email = await person()
    const cli = user()
    const login = startScript(
      'examples/links-cli/src/main.ts',
      { LINKS_CLI_CONFIG_DIR: cli.dir, LINKS_API_URL: w.api },
      ['login'],
    )
    const [, uri, code] = await waitForOutput(login, /To sign in, open (\S+)\nand enter the code: +(\S+)/)
    expect(uri).toBe(`${w.issuer}/device`)
    expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    const complete = completeUriIn(login.output())
    expect(complete).toBe(`${w.issuer}/device?user_code=${code}`)
    // It registered itself: a public, device-only client without a redirect URI.
    expect(login.output()).toMatch(/Registered with \S+ as "Links CLI" \(client id \S+\)/)
    const { consent } = await approve(complete, email, 'allow')
    expect(consent).toContain('will run on another device')
    expect(consent).toContain('Links CLI')
    expect(await login.exited).toBe(0)
    expect(login.output()).toContain('Signed in to Links API (links:read links:write).')

    expect(mode(cli.dir)).toBe(0o700)
    expect(mode(join(cli.dir, 'session.json'))).toBe(0o600)
    expect(mode(join(cli.dir, 'client.json'))).toBe(0o600)
    const client = JSON.parse(readFileSync(join(cli.dir, 'client.json'), 'utf8'))
    expect(client).toMatchObject({ issuer: w.issuer, registered_by: 'dynamic' })
    const row = await w.t.services.clients.getClient(client.client_id)
    expect(row).toMatchObject({ redirectUris: [], kind: 'dynamic' })
    // Nothing secret was printed.
    const session = cli.session()
    expect(login.output()).not.toContain(session.access_token)
    expect(login.output()).not.toContain(session.refresh_token)
    expect(session).toMatchObject({ api: w.api, resource: `${w.api}/api`, client_id: client.client_id })

    // A later command as a process reads the kept session.
    const whoami = startScript('examples/links-cli/src/main.ts', { LINKS_CLI_CONFIG_DIR: cli.dir }, [
      'whoami',
    ])
    expect(await whoami.exited).toBe(0)
    expect(whoami.output()).toContain(`Signed in to ${w.api} through ${w.issuer}`)
  })

  it('shortens, lists, shows statistics, then logs out, revoking the refresh token', async () => {
    const { cli } = await signedIn()
    expect(cli.sleeps).toEqual([1000]) // the interval linkauth gave (DEVICE_CODE_INTERVAL=1)

    const made = await cli.run([
      'shorten',
      'https://example.com/docs',
      '--slug',
      'docs-cli',
      '--tag',
      'cli',
      '--tag',
      'docs',
    ])
    expect(made.code, made.err).toBe(EXIT.OK)
    expect(made.out).toContain(`${w.api}/docs-cli`)
    expect(made.out).toContain('[cli, docs]')
    const taken = await cli.run(['shorten', 'https://example.com/other', '--slug', 'docs-cli'])
    expect(taken).toMatchObject({
      code: EXIT.FAILED,
      err: 'The slug "docs-cli" is taken; choose another with --slug.',
    })
    expect((await cli.run(['shorten', 'https://example.com/random'])).code).toBe(EXIT.OK)

    // Someone follows the short link once.
    const hop = await fetch(`${w.api}/docs-cli`, { redirect: 'manual' })
    expect(hop.status).toBe(302)

    const listed = await cli.run(['list'])
    expect(listed.code).toBe(EXIT.OK)
    expect(listed.out.split('\n')).toHaveLength(2)
    expect(listed.out).toMatch(
      /docs-cli +1 clicks +\S+\/docs-cli → https:\/\/example\.com\/docs {2}\[cli, docs\]/,
    )
    const stats = await cli.run(['stats', 'docs-cli'])
    expect(stats.code, stats.err).toBe(EXIT.OK)
    expect(stats.out).toContain('clicks: 1 in total')
    expect((await cli.run(['stats', 'nope'])).err).toBe('You have no link with the slug "nope".')

    const { refresh_token, client_id } = cli.session()
    const out = await cli.run(['logout'])
    expect(out.code).toBe(EXIT.OK)
    expect(out.out).toMatch(/^Signed out: the sign-in at \S+ is revoked/)
    expect(() => statSync(join(cli.dir, 'session.json'))).toThrow()
    expect(statSync(join(cli.dir, 'client.json')).isFile()).toBe(true)
    // Revoked at linkauth: the refresh token no longer works.
    expect(await refreshWith(refresh_token!, client_id)).toEqual({ status: 400, error: 'invalid_grant' })
    const after = await cli.run(['list'])
    expect(after.code).toBe(EXIT.NOT_SIGNED_IN)
    expect(after.err).toContain('Not signed in')
    // Logging in again reuses the kept registration, and the links API it was for.
    const second = user({ dir: cli.dir, env: { LINKS_API_URL: '' } })
    const email = await person()
    second.onSleep(async (n, o) => {
      if (n === 1) await approve(completeUriIn(o), email, 'allow')
    })
    expect((await second.run(['login'])).code).toBe(EXIT.OK)
    expect(second.output()).not.toContain('Registered with')
    expect(second.session().client_id).toBe(client_id)
  })
})

describe('refresh', () => {
  it('refreshes an expired access token, rotating the refresh token atomically (still 0600)', async () => {
    const { cli } = await signedIn()
    const before = cli.session()
    const file = join(cli.dir, 'session.json')
    const expired = { ...before, access_token_expires_at: 0 }
    writeFileSync(file, JSON.stringify(expired), { mode: 0o600 })
    expect((await cli.run(['list'])).code).toBe(EXIT.OK)
    const after = cli.session()
    expect(after.refresh_token).not.toBe(before.refresh_token)
    expect(after.access_token).not.toBe(before.access_token)
    expect(after.access_token_expires_at).toBeGreaterThan(Date.now())
    expect(mode(file)).toBe(0o600)
    // No temp file left beside it.
    expect(readdirSync(cli.dir).sort()).toEqual(['client.json', 'session.json'])
  })

  it('refreshes when the API answers 401 invalid_token, and calls again', async () => {
    const { cli } = await signedIn()
    const file = join(cli.dir, 'session.json')
    const before = cli.session()
    writeFileSync(file, JSON.stringify({ ...before, access_token: 'not-a-token' }), { mode: 0o600 })
    const listed = await cli.run(['list'])
    expect(listed.code, listed.err).toBe(EXIT.OK)
    expect(cli.session().refresh_token).not.toBe(before.refresh_token)
  })

  it('says to log in again when the refresh token was revoked elsewhere, and forgets the session', async () => {
    const { cli } = await signedIn()
    const s = cli.session()
    // Revoked elsewhere (another copy of the CLI logging out, say): refresh fails with invalid_grant.
    await fetch(`${w.issuer}/api/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: s.refresh_token!, client_id: s.client_id }),
    })
    writeFileSync(join(cli.dir, 'session.json'), JSON.stringify({ ...s, access_token_expires_at: 0 }))
    const listed = await cli.run(['list'])
    expect(listed.code).toBe(EXIT.NOT_SIGNED_IN)
    expect(listed.err).toContain('The sign-in is no longer valid')
    expect(listed.err).toContain('login again')
    expect(() => cli.session()).toThrow()
  })
})

describe('a login that does not end in tokens', () => {
  it('honours slow_down: 5 s more between polls from then on', async () => {
    const email = await person()
    const cli = user()
    cli.onSleep(async (n, out) => {
      // The second wait is cut short (as a machine waking from sleep might): linkauth says slow_down.
      if (n === 2) return 0
      if (n === 4) await approve(completeUriIn(out), email, 'allow')
    })
    const login = await cli.run(['login'])
    expect(login.code, login.err).toBe(EXIT.OK)
    expect(cli.sleeps).toEqual([1000, 1000, 6000, 6000])
  })

  it('exits 4 with a plain message when the person denies, keeping nothing', async () => {
    const email = await person()
    const cli = user()
    cli.onSleep(async (n, out) => {
      if (n === 1) await approve(completeUriIn(out), email, 'deny')
    })
    const login = await cli.run(['login'])
    expect(login).toMatchObject({
      code: EXIT.DENIED,
      err: 'The sign-in was denied on the approval page. Nothing was kept.',
    })
    expect(() => cli.session()).toThrow()
  })

  it('exits 5 when the code expires before anyone approves it', async () => {
    const cli = user()
    cli.onSleep(async (n) => (n === 2 ? 601 : undefined))
    const login = await cli.run(['login'])
    expect(login).toMatchObject({
      code: EXIT.EXPIRED,
      err: 'The code expired before it was approved. Run login again for a new code.',
    })
    expect(cli.sleeps).toHaveLength(2)
  })

  it('uses a client id given by flag (one the operator registered for the device grant)', async () => {
    const created = await w.t.services.clients.createClient({
      name: 'Operator links CLI',
      redirect_uris: [],
      grant_types: ['refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    })
    const email = await person()
    const cli = user()
    cli.onSleep(async (n, out) => {
      if (n === 1) await approve(completeUriIn(out), email, 'allow')
    })
    const login = await cli.run(['login', '--client-id', created.id])
    expect(login.code, login.err).toBe(EXIT.OK)
    expect(cli.output()).not.toContain('Registered with')
    expect(cli.session().client_id).toBe(created.id)
  })

  it('answers usage errors and unknown commands with exit 2', async () => {
    const cli = user()
    expect((await cli.run([])).code).toBe(EXIT.USAGE)
    expect((await cli.run(['frobnicate'])).code).toBe(EXIT.USAGE)
    expect((await cli.run(['stats'])).err).toBe('Usage: stats SLUG')
    expect((await cli.run(['login', '--api', 'http://links.example.com'])).err).toContain('must be https')
    expect((await cli.run(['whoami'])).code).toBe(EXIT.NOT_SIGNED_IN)
  })

  it('takes a client id that starts with a dash (one in 64 that the server mints) as the value it is', async () => {
    const cli = user()
    // Refused for the API address, after the arguments were read: not a usage error about the id.
    const run = await cli.run([
      'login',
      '--client-id',
      '-AbCdEfGhIjKlMnOpQrStUv',
      '--api',
      'http://links.example.com',
    ])
    expect(run.err).toContain('must be https')
    expect(run.err).not.toContain('ambiguous')
  })
})
