import { readFileSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import {
  EXAMPLE_REDIRECT_URI,
  FIRST_RUN_MESSAGE,
  firstRunHint,
  firstRunRecord,
  logFirstRunHint,
  runningFrom,
} from '../../src/first-run-hint.js'
import { createLogger, stdoutDestination } from '../../src/logger.js'

/** What a person sees in the terminal at `npm start`: the log lines and the next-step hint. */

function terminal(isTTY: boolean) {
  const out = Object.assign(new PassThrough(), { isTTY })
  let text = ''
  out.on('data', (d) => (text += d))
  return { out, text: () => text }
}

describe('log lines', () => {
  it('are readable lines when stdout is a terminal', async () => {
    const { out, text } = terminal(true)
    const logger = createLogger('info', await stdoutDestination(out))
    logger.info({ issuer: 'http://localhost:3000' }, 'linkauth started')
    expect(text()).toMatch(
      /^\[\d\d:\d\d:\d\d\] INFO: linkauth started\n\s+issuer: "http:\/\/localhost:3000"\n/,
    )
    expect(text()).not.toContain('{"level"')
  })

  it('stay JSON lines for anything else (log collectors, docker logs)', async () => {
    expect(await stdoutDestination(terminal(false).out)).toBeUndefined()
  })
})

describe('the first-run hint', () => {
  const config = { adminToken: undefined, dataDir: './.data' }

  it('gives one command per line, with the demo in a checkout', () => {
    const lines = firstRunHint(config, 'checkout').split('\n')
    expect(lines[0]).toBe('No application is registered yet. Next steps:')
    expect(lines).toContain('  watch the whole flow:     npm run demo   (in another terminal)')
    expect(lines.some((l) => /npm run cli -- clients create --name "My App" --redirect-uri /.test(l))).toBe(
      true,
    )
    expect(lines.some((l) => l.includes('npm run cli -- users create'))).toBe(true)
    expect(firstRunHint(config, 'checkout')).toContain('.data/admin-token')
    expect(firstRunHint({ ...config, adminToken: 'x'.repeat(32) }, 'checkout')).not.toContain('admin-token')
  })

  it("names LINKAUTH_URL for the demo when the server is not at the demo's default (another PORT)", () => {
    expect(firstRunHint({ ...config, issuer: 'http://localhost:3000' }, 'checkout')).toContain(
      '  watch the whole flow:     npm run demo   (in another terminal)',
    )
    const elsewhere = { ...config, issuer: 'http://localhost:4000' }
    expect(firstRunHint(elsewhere, 'checkout')).toContain(
      '  watch the whole flow:     LINKAUTH_URL=http://localhost:4000 npm run demo   (in another terminal)',
    )
    expect(firstRunRecord(elsewhere, 'checkout').demo).toBe('LINKAUTH_URL=http://localhost:4000 npm run demo')
  })

  it('suggests only the linkauth command where there is no checkout (an install, the Docker image)', () => {
    for (const from of ['installed', 'container'] as const) {
      const hint = firstRunHint(config, from)
      expect(hint).not.toContain('npm run')
      expect(hint).toMatch(
        /^ {2}register an application: +(docker exec <container> )?linkauth clients create /m,
      )
      expect(hint).toMatch(/^ {2}and a user: +(docker exec <container> )?linkauth users create /m)
    }
    expect(firstRunHint(config, 'container')).toContain('docker exec <container> linkauth clients create')
  })

  it('registers the same redirect URI as the README', () => {
    const readme = readFileSync('README.md', 'utf8')
    const registered = [...readme.matchAll(/clients create --name "My App" --redirect-uri (\S+)/g)].map(
      (m) => m[1],
    )
    expect(registered.length).toBeGreaterThan(0)
    for (const uri of registered) expect(uri).toBe(EXAMPLE_REDIRECT_URI)
    expect(firstRunHint(config, 'checkout')).toContain(`--redirect-uri ${EXAMPLE_REDIRECT_URI}`)
  })

  it('is one record with a field per step where the log is JSON lines (docker logs): no \\n in it', async () => {
    for (const from of ['checkout', 'container'] as const) {
      const { out, text } = terminal(false)
      const logger = createLogger('info', (await stdoutDestination(out)) ?? out)
      logFirstRunHint(logger, config, from, false)
      const lines = text().trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).not.toContain('\\n')
      const record = JSON.parse(lines[0]!) as Record<string, unknown>
      const cli = from === 'checkout' ? 'npm run cli --' : 'docker exec <container> linkauth'
      expect(record).toMatchObject({
        level: 30,
        msg: FIRST_RUN_MESSAGE,
        register_application: `${cli} clients create --name "My App" --redirect-uri ${EXAMPLE_REDIRECT_URI}`,
        create_user: `${cli} users create --email you@example.com --password '<password>'`,
        admin_token: '.data/admin-token (or ADMIN_TOKEN)',
      })
      expect(record.demo).toBe(from === 'checkout' ? 'npm run demo' : undefined)
      for (const value of Object.values(record)) expect(String(value)).not.toContain('\n')
    }
  })

  it('stays lines of text in a terminal', async () => {
    const { out, text } = terminal(true)
    const logger = createLogger('info', await stdoutDestination(out))
    logFirstRunHint(logger, config, 'checkout', true)
    expect(text()).toContain(`INFO: ${FIRST_RUN_MESSAGE}\n  watch the whole flow:`)
  })

  it('knows a checkout with its dev dependencies from one without', () => {
    expect(runningFrom('.')).toBe('checkout')
    expect(runningFrom('dist')).not.toBe('checkout')
  })
})
