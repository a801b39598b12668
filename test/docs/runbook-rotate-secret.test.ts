import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'

/**
 * docs/operating.md "Rotate a resource server's secret": its commands, run as written (bash, the
 * `linkauth` command, curl) against a live server, in the order the runbook gives them.
 */
const run = promisify(execFile)
const doc = readFileSync('docs/operating.md', 'utf8')

/** The ```sh blocks of the section under `heading` (a list item's indentation removed). */
function shellBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`no section ${heading}`)
  const end = markdown.indexOf('\n## ', start + heading.length + 2)
  const section = markdown.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!
      .split('\n')
      .map((line) => line.slice(indent!.length))
      .join('\n'),
  )
}

let t: TestApp
let issuer: string
let adminUrl: string
let bin: string
beforeAll(async () => {
  ;({
    t,
    issuer,
    adminUrl: adminUrl!,
  } = (await listenTestApp({}, { admin: true })) as {
    t: TestApp
    issuer: string
    adminUrl: string
  })
  // The `linkauth` command of an installed package, here from the sources.
  bin = mkdtempSync(join(tmpdir(), 'linkauth-bin-'))
  const main = resolve('src/cli/main.ts')
  writeFileSync(join(bin, 'linkauth'), `#!/bin/sh\nexec "${process.execPath}" --import tsx "${main}" "$@"\n`)
  chmodSync(join(bin, 'linkauth'), 0o755)
})
afterAll(async () => {
  rmSync(bin, { recursive: true, force: true })
  await t?.close()
})

it('the runbook’s commands rotate the secret; both secrets work during the overlap', async () => {
  const [rotate, check, show, ...more] = shellBlocks(doc, "## Rotate a resource server's secret")
  expect(more).toEqual([])
  expect(rotate).toContain('linkauth resource-servers rotate-secret "$RS_ID"')
  const server = await t.services.resourceServers.createResourceServer({ name: 'Runbook API' })
  const sh = async (script: string, extra: Record<string, string> = {}) =>
    (
      await run('bash', ['-euo', 'pipefail', '-c', script], {
        env: {
          ...process.env,
          PATH: `${bin}:${process.env.PATH}`,
          LINKAUTH_ADMIN_URL: adminUrl,
          ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          ISSUER: issuer,
          RS_ID: server.id,
          ...extra,
        },
      })
    ).stdout

  const rotated = await sh(rotate!)
  const secret = /^secret: +(\S+)$/m.exec(rotated)?.[1]
  expect(secret, rotated).toMatch(/^[A-Za-z0-9_-]{43}$/)
  expect(rotated).toMatch(/^old secret: works until /m)

  expect(await sh(check!, { NEW_SECRET: secret! })).toBe('200\n')
  expect(await sh(check!, { NEW_SECRET: server.secret })).toBe('200\n') // the old one, in the overlap
  expect(await sh(check!, { NEW_SECRET: 'not-the-secret' })).toBe('401\n')

  const shown = await sh(show!)
  const until = /^old secret: +works until (\S+)$/m.exec(shown)?.[1]
  expect(new Date(until!).getTime() - Date.now()).toBeGreaterThan(3590_000)
  expect(shown).not.toContain(secret)
})
