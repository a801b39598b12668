import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { afterAll, beforeAll } from 'vitest'
import { buildLinksApp } from '../../links-api/src/app.js'
import { createLinksTestDatabase, type LinksTestDatabase } from '../../links-api/test/links-database.js'
import { GENEROUS_LIMITS, listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { hiddenField, PASSWORD } from '../../../test/helpers/browser.js'
import { createRunningClock } from '../../../test/helpers/clock.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { freePort } from '../../../test/helpers/net.js'
import { captureLogger } from '../../../test/helpers/resource.js'
import { registerApi } from '../../../test/helpers/resource-apis.js'
import { killStartedServers } from '../../../test/helpers/server-process.js'
import { runLinksCli } from '../src/cli.js'
import type { SessionFile } from '../src/store.js'

/**
 * A real linkauth (real PostgreSQL, HTTP on a free port, a clock that runs in real time and that a
 * test can move ahead) and the real links API beside it, registered as its resource server; a
 * person who approves device codes over HTTP on /device; and the CLI, run in this process with its
 * own config folder and a sleep that moves linkauth's clock instead of waiting. `env` adds to
 * linkauth's settings, read when it starts (after the caller's own beforeAll hooks registered first).
 */
export function linksCliWorld(env: () => Record<string, string> = () => ({})) {
  const clock = createRunningClock()
  const w = {} as {
    t: TestApp
    issuer: string
    api: string
    linksApp: FastifyInstance
    linksDb: LinksTestDatabase
    verifier: ResourceVerifier
  }
  const dirs: string[] = []

  beforeAll(async () => {
    ;({ t: w.t, issuer: w.issuer } = await listenTestApp({
      clock,
      env: { ...GENEROUS_LIMITS, DEVICE_CODE_INTERVAL: '1', ...env() },
    }))
    const port = await freePort()
    w.api = `http://127.0.0.1:${port}`
    const credentials = await registerApi(w.t, {
      name: 'Links API',
      resource: `${w.api}/api`,
      scopes: ['links:read', 'links:write'],
    })
    w.verifier = await createResourceVerifier({
      issuer: w.issuer,
      resource: `${w.api}/api`,
      credentials,
      logger: captureLogger().logger,
    })
    w.linksDb = await createLinksTestDatabase(w.t.database)
    w.linksApp = await buildLinksApp({ config: { publicUrl: w.api }, db: w.linksDb.db, verifier: w.verifier })
    await w.linksApp.listen({ port, host: '127.0.0.1' })
  }, 60_000)

  afterAll(async () => {
    killStartedServers()
    await w.linksApp?.close()
    await w.verifier?.close()
    await w.linksDb?.close()
    await w.t?.close()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  /** A person with an account. */
  async function person() {
    const email = `cli-${Math.random().toString(36).slice(2)}@example.com`
    await w.t.services.users.createUser({ email, password: PASSWORD })
    return email
  }

  /**
   * The person's side over real HTTP: open the address the CLI printed (verification_uri_complete),
   * submit the code it shows, sign in, tick "I started this" and answer. Returns the consent page.
   */
  async function approve(completeUri: string, email: string, decision: 'allow' | 'deny') {
    const browser = new HttpBrowser(w.issuer)
    const form = await browser.request(new URL(completeUri).pathname + new URL(completeUri).search)
    const userCode = /name="user_code"[^>]*value="([^"]+)"/.exec(form.body)?.[1]
    if (!userCode) throw new Error(`no prefilled code on ${completeUri}`)
    const entered = await browser.request('/device', {
      method: 'POST',
      form: { csrf_token: hiddenField(form.body, 'csrf_token'), user_code: userCode },
    })
    const signIn = await browser.follow(entered)
    const signedIn = await browser.request('/login', {
      method: 'POST',
      form: {
        email,
        password: PASSWORD,
        csrf_token: hiddenField(signIn.body, 'csrf_token'),
        next: hiddenField(signIn.body, 'next'),
      },
    })
    const consent = await browser.follow(signedIn)
    const answer = await browser.request('/device/confirm', {
      method: 'POST',
      form: {
        request: hiddenField(consent.body, 'request'),
        csrf_token: hiddenField(consent.body, 'csrf_token'),
        decision,
        started_here: 'yes',
      },
    })
    if (answer.res.status !== 200)
      throw new Error(`the decision answered ${answer.res.status}: ${answer.body}`)
    return { consent: consent.body, browser }
  }

  /** A config folder of its own (as $LINKS_CLI_CONFIG_DIR), removed after the file. */
  function configFolder(): string {
    const dir = join(mkdtempSync(join(tmpdir(), 'links-cli-')), 'linkauth-links')
    dirs.push(dir)
    return dir
  }

  /**
   * One user of the CLI: `run` calls its main with this folder and the links API's address;
   * `onSleep(n, output)` runs at the n-th wait of a login (the person approving, say), and the
   * wait then moves linkauth's clock by what was asked unless `onSleep` answers a number of
   * seconds to move it by instead.
   */
  function user(options: { dir?: string; env?: Record<string, string> } = {}) {
    const dir = options.dir ?? configFolder()
    const output: string[] = []
    const sleeps: number[] = []
    let onSleep: ((n: number, out: string) => Promise<number | void>) | undefined
    return {
      dir,
      sleeps,
      output: () => output.join('\n'),
      onSleep(hook: typeof onSleep) {
        onSleep = hook
      },
      async run(args: string[]) {
        const out: string[] = []
        const err: string[] = []
        const code = await runLinksCli(args, {
          out: (l) => (out.push(l), output.push(l)),
          err: (l) => (err.push(l), output.push(l)),
          env: { LINKS_CLI_CONFIG_DIR: dir, LINKS_API_URL: w.api, ...options.env },
          sleep: async (ms) => {
            sleeps.push(ms)
            const moved = await onSleep?.(sleeps.length, output.join('\n'))
            clock.advance(typeof moved === 'number' ? moved : ms / 1000)
          },
        })
        return { code, out: out.join('\n'), err: err.join('\n') }
      },
      session: () => JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8')) as SessionFile,
    }
  }

  return { w, clock, person, approve, user, configFolder }
}

/** The verification_uri_complete a login printed. */
export const completeUriIn = (output: string) => /\(or open (\S+), which carries the code\)/.exec(output)![1]!
