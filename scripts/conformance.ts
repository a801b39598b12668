/**
 * `npm run conformance`: the official MCP conformance suite, pinned, against linkauth and the links
 * API's /mcp, as CI runs it (.ci/run). It starts linkauth and the links API on free ports over a test
 * database of their own (TEST_DATABASE_URL, else embedded PGlite), gets a token for /mcp as an app
 * does (a person signs in and allows, over HTTP), and runs:
 *
 * - the server scenarios the suite requires of each revision (`--requirements 2025-11-25` and
 *   `--requirements 2026-07-28`, each at its own wire) against /mcp, the token sent on every request
 *   by a small forwarding proxy in front of the links API (the suite's server mode sends no
 *   Authorization header of its own);
 * - the authorization-server scenarios against linkauth (`--resource` the MCP endpoint), the consent
 *   of `authorization-code-grant` given by this script when the suite prints its authorize URL.
 *
 * What cannot apply to a tools-only server behind OAuth is listed with its reason in
 * .ci/conformance-baseline.json; any other failure, and any baseline entry that no longer fails,
 * exits 1. The suite needs Node.js ≥ 22: it runs on the npm registry's `node@24` through npx.
 * CONFORMANCE_OUTPUT: where the suite's checks.json files go (default: a temporary directory).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createResourceVerifier } from '@linkauth/resource'
import { buildLinksApp } from '../examples/links-api/src/app.js'
import { createLinksTestDatabase } from '../examples/links-api/test/links-database.js'
import { connectDatabase } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrator.js'
import { GENEROUS_LIMITS, listenTestApp, type TestApp } from '../test/helpers/app.js'
import type { TestDatabase } from '../test/helpers/database.js'
import { createEmptyDatabase, databaseUrl, dropDatabase } from '../test/helpers/postgres-admin.js'
import { CHALLENGE, PASSWORD, seed, VERIFIER } from '../test/helpers/browser.js'
import { HttpBrowser } from '../test/helpers/http-browser.js'
import { freePort } from '../test/helpers/net.js'
import { registerApi } from '../test/helpers/resource-apis.js'
import { type Baseline, judge, readResults, type Verdict } from './conformance-judge.js'

export const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.12'
const NODE = 'node@24'
const BASELINE = new URL('../.ci/conformance-baseline.json', import.meta.url)
/** What each leg must run and pass (beyond what the baseline excuses). */
const MUST_RUN: Record<string, string[]> = {
  '2025-11-25': ['server-initialize', 'tools-list', 'dns-rebinding-protection'],
  '2026-07-28': ['server-stateless', 'tools-list', 'dns-rebinding-protection', 'caching'],
  authorization: ['authorization-server-metadata-endpoint', 'authorization-code-grant'],
}

const say = (line: string) => process.stdout.write(`${line}\n`)

/** The suite's CLI on Node 24: `npx -y -p node@24 -p <suite> conformance …`; `onLine` sees its output. */
function runSuite(args: string[], onLine: (line: string) => void = () => {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['-y', '-p', NODE, '-p', SUITE, 'conformance', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let pending = ''
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk)
      pending += chunk.toString()
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) onLine(line)
    })
    child.on('error', reject)
    child.on('close', (code) => resolve(code ?? 1))
  })
}

/** A proxy to `target` that adds the bearer token to every request, all else passed on as sent. */
async function tokenProxy(target: URL, token: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    forward.on('error', () => res.writeHead(502).end())
    req.pipe(forward)
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${port}` }
}

/** A fresh, migrated database on TEST_DATABASE_URL's server (dropped on close), else embedded PGlite. */
async function scratchDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL
  if (!adminUrl) {
    const handle = await connectDatabase({})
    await migrateToLatest(handle.db)
    return handle
  }
  const name = await createEmptyDatabase(adminUrl)
  const url = databaseUrl(adminUrl, name)
  const handle = await connectDatabase({ databaseUrl: url })
  await migrateToLatest(handle.db)
  return {
    ...handle,
    url,
    close: async () => {
      await handle.close()
      await dropDatabase(adminUrl, name)
    },
  }
}

/** linkauth, the links API with /mcp registered as its own resource, and a token for /mcp. */
async function startServices() {
  const database = await scratchDatabase()
  const { t } = await listenTestApp({ env: { ...GENEROUS_LIMITS }, database })
  const issuer = t.config.issuer
  const linksPort = await freePort()
  const linksBase = `http://127.0.0.1:${linksPort}`
  const mcpResource = `${linksBase}/mcp`
  const scopes = ['links:read', 'links:write']
  const rest = await registerApi(t, { name: 'Links API', resource: `${linksBase}/api`, scopes })
  const mcp = await registerApi(t, { name: 'Links for AI agents', resource: mcpResource, scopes })
  const restVerifier = await createResourceVerifier({
    issuer,
    resource: `${linksBase}/api`,
    credentials: rest,
  })
  const mcpVerifier = await createResourceVerifier({ issuer, resource: mcpResource, credentials: mcp })
  const linksDb = await createLinksTestDatabase(t.database)
  const token = await mcpToken(t, issuer, mcpResource)
  const proxy = await tokenProxy(new URL(linksBase), token)
  const linksApp = await buildLinksApp({
    config: { publicUrl: linksBase },
    db: linksDb.db,
    verifier: restVerifier,
    // The suite calls the proxy: its origin is the one a page of this endpoint's own would have.
    mcp: {
      verifier: mcpVerifier,
      sessionSecret: 'conformance session secret, 32 bytes+',
      allowedOrigins: [proxy.url],
    },
  })
  await linksApp.listen({ port: linksPort, host: '127.0.0.1' })
  return {
    t,
    issuer,
    mcpResource,
    mcpUrl: `${proxy.url}/mcp`,
    async close() {
      await new Promise((resolve) => proxy.server.close(resolve))
      await linksApp.close()
      await Promise.all([restVerifier.close(), mcpVerifier.close()])
      await linksDb.close()
      await t.close()
      await database.close()
    },
  }
}

/** A token for /mcp with both scopes, the way an app gets one: sign-in and Allow, then the code. */
async function mcpToken(t: TestApp, issuer: string, resource: string): Promise<string> {
  const s = await seed(t)
  const query = new URLSearchParams({ ...s.params, code_challenge: CHALLENGE, resource })
  const callback = await new HttpBrowser(issuer).signInAndAllow(
    `/oauth/authorize?${query}`,
    s.email,
    PASSWORD,
  )
  const res = await fetch(`${issuer}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: VERIFIER,
      client_id: s.client.id,
      redirect_uri: s.params.redirect_uri,
      resource,
    }),
  })
  if (!res.ok) throw new Error(`the token request answered ${res.status}`)
  return ((await res.json()) as { access_token: string }).access_token
}

/**
 * The authorization-server scenarios: a public client registered for the suite's callback, and the
 * person's part of `authorization-code-grant` (sign in, Allow) done when the suite prints the URL; a
 * refusal linkauth redirects at once is handed to the callback as it is.
 */
async function authorizationLeg(t: TestApp, issuer: string, resource: string, output: string) {
  const port = await freePort()
  const callback = `http://127.0.0.1:${port}/callback`
  const s = await seed(t, { redirectUris: [callback] })
  const consents: Promise<void>[] = []
  const consent = async (authorizeUrl: URL) => {
    const browser = new HttpBrowser(issuer)
    const path = `${authorizeUrl.pathname}${authorizeUrl.search}`
    const first = await browser.follow(await browser.request(path))
    const back =
      first.location !== undefined
        ? new URL(first.location)
        : await browser.signInAndAllow(path, s.email, PASSWORD)
    await fetch(back)
  }
  await runSuite(
    [
      'authorization',
      '--url',
      issuer,
      '--client-id',
      s.client.id,
      '--resource',
      resource,
      '--port',
      String(port),
      '-o',
      output,
    ],
    (line) => {
      if (line.startsWith(`${issuer}/`) && line.includes('response_type=code'))
        consents.push(
          consent(new URL(line.trim())).catch((err: unknown) => {
            say(`consent failed: ${String(err)}`)
          }),
        )
    },
  )
  await Promise.all(consents)
}

function report(verdict: Verdict): boolean {
  for (const line of verdict.known) say(`  known (baseline): ${line}`)
  for (const line of [...verdict.missing, ...verdict.unexpected, ...verdict.stale]) say(`  FAIL ${line}`)
  return verdict.missing.length + verdict.unexpected.length + verdict.stale.length === 0
}

async function main() {
  const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline
  const keep = process.env.CONFORMANCE_OUTPUT
  const root = keep ?? mkdtempSync(join(tmpdir(), 'linkauth-conformance-'))
  const services = await startServices()
  let ok = true
  try {
    const legs: string[] = []
    for (const revision of ['2025-11-25', '2026-07-28']) {
      say(`== ${SUITE}: server scenarios of ${revision} against ${services.mcpResource}`)
      await runSuite([
        'server',
        '--url',
        services.mcpUrl,
        '--requirements',
        revision,
        '-o',
        join(root, revision),
      ])
      legs.push(revision)
    }
    say(`== ${SUITE}: authorization-server scenarios against ${services.issuer}`)
    await authorizationLeg(services.t, services.issuer, services.mcpResource, join(root, 'authorization'))
    legs.push('authorization')
    say('== conformance verdict')
    for (const leg of legs)
      ok = report(judge(leg, readResults(join(root, leg)), baseline, MUST_RUN[leg] ?? [])) && ok
  } finally {
    await services.close()
    if (!keep) rmSync(root, { recursive: true, force: true })
  }
  say(ok ? 'conformance: every scenario passes or is in the baseline' : 'conformance: FAILED')
  process.exitCode = ok ? 0 : 1
}

await main()
