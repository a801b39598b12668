import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD } from '../helpers/browser.js'
import { cliAgainst } from '../helpers/cli.js'

/**
 * The runbooks of docs/operating.md "Find who revoked an app" and "Reset a user's password", run as
 * written: each `linkauth` line of their code blocks, against a live admin API, after the story
 * each runbook starts from.
 */
const doc = readFileSync('docs/operating.md', 'utf8')

/** The `linkauth …` lines of the sh blocks of the section under `heading`. */
function commandsOf(heading: string): string[] {
  const start = doc.indexOf(`\n### ${heading}\n`)
  expect(start, heading).toBeGreaterThan(0)
  const end = doc.indexOf('\n#', start + heading.length + 6)
  const section = doc.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    m[1]!.split('\n').filter((line) => line.startsWith('linkauth ')),
  )
}

/** A shell line's words: "quoted" words whole, $VARIABLES from `vars`. */
function words(line: string, vars: Record<string, string>): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)]
    .map((m) => m[1] ?? m[2]!)
    .map((w) => w.replace(/\$([A-Z_]+)/g, (_, name: string) => vars[name] ?? `$${name}`))
    .slice(1)
}

let t: TestApp
let adminUrl: string
let user: { id: string }
beforeAll(async () => {
  t = await buildTestApp()
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
  user = await t.services.users.createUser({ email: 'alice@example.com', password: PASSWORD })
})
afterAll(async () => t.close())

const cli = cliAgainst(() => adminUrl)

describe('docs/operating.md runbooks, as written', () => {
  it('Find who revoked an app', async () => {
    const client = await t.services.clients.createClient({
      name: 'Shortcut Stats',
      redirect_uris: ['https://stats.example/cb'],
    })
    await t.services.grants.approveAndIssueCode({
      userId: user.id,
      clientId: client.id,
      redirectUri: 'https://stats.example/cb',
      scopes: ['links:read'],
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    })
    // The story: Alice revokes it on her account page (and forgets she did).
    const browser = new Browser(t.app, '198.51.100.7')
    await browser.signIn('alice@example.com', PASSWORD)
    const page = await browser.get('/account/apps')
    await browser.post(`/account/apps/${client.id}/revoke`, {
      csrf_token: hiddenField(page.body, 'csrf_token'),
    })
    await t.services.clients.disableClient(client.id)

    const commands = commandsOf('Find who revoked an app')
    expect(commands.length).toBeGreaterThanOrEqual(3)
    const outputs = []
    for (const line of commands) {
      const result = await cli(words(line, { CLIENT_ID: client.id }))
      expect(result.code, `${line}\n${result.err}`).toBe(0)
      outputs.push(result.out)
    }
    expect(outputs[0]).toMatch(
      new RegExp(
        `grant\\.revoked\\s+user:${user.id}\\s+grant:\\S+\\s+${user.id}\\s+${client.id}\\s+198\\.51\\.100\\.7`,
      ),
    )
    const story = JSON.parse(outputs[1]!).events.map((e: { type: string }) => e.type)
    expect(story).toEqual(['grant.revoked', 'consent.granted'])
    expect(outputs[2]).toMatch(/client\.disabled\s+operator/)
  })

  it("Reset a user's password", async () => {
    await t.services.users
      .createUser({ email: 'alice+reset@example.com', password: PASSWORD })
      .catch(() => {})
    const commands = commandsOf("Reset a user's password")
    expect(commands).toHaveLength(2)
    const issued = await cli(words(commands[0]!, {}))
    expect(issued.code, issued.err).toBe(0)
    const url = new URL(issued.out.split('\n')[0]!)
    expect(url.pathname).toBe('/account/reset-password')
    expect(issued.out).toContain('valid until')

    // The user opens the link and sets a password.
    const browser = new Browser(t.app)
    const form = await browser.get(url.pathname + url.search)
    const set = await browser.post('/account/reset-password', {
      csrf_token: hiddenField(form.body, 'csrf_token'),
      token: hiddenField(form.body, 'token'),
      new_password: 'alice has a new password',
      confirm_password: 'alice has a new password',
    })
    expect(set.statusCode).toBe(200)

    const checked = await cli(words(commands[1]!, {}))
    expect(checked.code, checked.err).toBe(0)
    expect(checked.out).toMatch(/password\.reset\s+user:/)
    expect(checked.out).toMatch(/password\.reset_link_issued\s+operator/)
  })
})
