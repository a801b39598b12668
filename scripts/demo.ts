/**
 * `npm run demo`: the whole Authorization Code + PKCE flow, against a running linkauth, that a person
 * can watch. It registers a demo application whose redirect_uri is a tiny callback server on
 * 127.0.0.1, creates a demo user, prints the authorize URL to open in a browser, and when the
 * callback receives the code, swaps it at the token endpoint with the PKCE verifier and prints the
 * answer (tokens abbreviated).
 *
 * Environment: LINKAUTH_URL (default http://localhost:3000), LINKAUTH_ADMIN_URL (default
 * http://127.0.0.1:3001), ADMIN_TOKEN (default: read from $DATA_DIR/admin-token, DATA_DIR=./.data),
 * DEMO_PORT (the callback port; default: any free port), DEMO_TIMEOUT (seconds to wait; default 600).
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { CliError, createAdminClient } from '../src/cli/admin-client.js'

const env = process.env
const publicUrl = (env.LINKAUTH_URL || 'http://localhost:3000').replace(/\/$/, '')
const adminUrl = env.LINKAUTH_ADMIN_URL || 'http://127.0.0.1:3001'
const timeoutSeconds = Number(env.DEMO_TIMEOUT || 600)

const say = (line = '') => process.stdout.write(`${line}\n`)
const base64url = (bytes: Buffer) => bytes.toString('base64url')
/** Enough of a secret to recognise it, never enough to use it. */
const abbreviate = (value: unknown) =>
  typeof value === 'string' && value.length > 16
    ? `${value.slice(0, 12)}… (${value.length} characters)`
    : value

function adminToken(): string | undefined {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN
  const path = join(env.DATA_DIR || './.data', 'admin-token')
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined
}

interface Metadata {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
}

async function metadata(): Promise<Metadata> {
  const url = `${publicUrl}/.well-known/oauth-authorization-server`
  let response: Response
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(15_000) })
  } catch {
    throw new CliError(`cannot reach linkauth at ${publicUrl}; start it first with 'npm start'`, 1)
  }
  if (!response.ok) throw new CliError(`${url} answered ${response.status}`, 1)
  return (await response.json()) as Metadata
}

/** The callback server: resolves with the first /callback query, answers the browser with a short page. */
function callbackServer(port: number) {
  let resolveQuery: (query: URLSearchParams) => void
  const received = new Promise<URLSearchParams>((resolve) => (resolveQuery = resolve))
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (url.pathname !== '/callback') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    const ok = url.searchParams.has('code')
    const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>linkauth demo</title></head><body><main><h1>${
      ok ? 'The demo app received a code' : 'The demo app received an error'
    }</h1><p>Go back to the terminal: the demo ${
      ok ? 'swaps the code for tokens there' : 'prints what happened there'
    }. You can close this page.</p></main></body></html>`
    res
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'none'",
      })
      .end(body)
    resolveQuery(url.searchParams)
  })
  return {
    received,
    listen: () =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function main(): Promise<number> {
  const meta = await metadata()
  const request = createAdminClient({ baseUrl: adminUrl, token: adminToken() })
  const callback = callbackServer(Number(env.DEMO_PORT || 0))
  const port = await callback.listen()
  const redirectUri = `http://127.0.0.1:${port}/callback`
  try {
    say(`linkauth demo: the Authorization Code flow with PKCE against ${meta.issuer}`)
    say()
    const client = await request<{ client_id: string }>('POST', '/admin/clients', {
      name: 'linkauth demo',
      redirect_uris: [redirectUri],
      scopes: ['links:read', 'links:write'],
    })
    say(`1. Registered the application "linkauth demo"`)
    say(`   client_id:    ${client.client_id}`)
    say(`   redirect_uri: ${redirectUri} (this script listens there)`)

    const email = `demo-${randomBytes(4).toString('hex')}@example.com`
    const password = `demo-${randomBytes(6).toString('base64url')}`
    await request('POST', '/admin/users', { email, password })
    say(`2. Created a demo user to sign in with`)
    say(`   Email:    ${email}`)
    say(`   Password: ${password}`)

    const verifier = base64url(randomBytes(32))
    const challenge = base64url(createHash('sha256').update(verifier).digest())
    const state = base64url(randomBytes(16))
    const authorize = new URL(meta.authorization_endpoint)
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scope: 'links:read links:write',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()
    say(`3. Open this address in a browser, sign in, and choose Allow (or Deny):`)
    say()
    say(`   ${authorize.href}`)
    say()
    say(`   Waiting for the browser to come back to ${redirectUri} …`)

    const timer = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new CliError(`no callback within ${timeoutSeconds} s; run the demo again`, 1)),
        timeoutSeconds * 1000,
      ).unref(),
    )
    const query = await Promise.race([callback.received, timer])
    if (query.get('state') !== state) throw new CliError('the callback came back with another state', 1)
    if (query.get('iss') !== meta.issuer) throw new CliError(`the callback's iss is not ${meta.issuer}`, 1)
    const error = query.get('error')
    if (error) {
      say(`4. The callback received error=${error}: ${query.get('error_description') ?? ''}`)
      say(`   That is what an application sees when the person chooses Deny.`)
      return 1
    }
    const code = query.get('code') ?? ''
    say(`4. The callback received a code (state and iss match); swapping it at ${meta.token_endpoint}`)

    const response = await fetch(meta.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: client.client_id,
        code_verifier: verifier,
      }),
      signal: AbortSignal.timeout(15_000),
    })
    const tokens = (await response.json()) as Record<string, unknown>
    if (!response.ok) {
      say(`5. The token endpoint refused (${response.status}): ${JSON.stringify(tokens)}`)
      return 1
    }
    const shown = Object.fromEntries(
      Object.entries(tokens).map(([k, v]) => [k, /token/.test(k) && k !== 'token_type' ? abbreviate(v) : v]),
    )
    say(`5. The token response (${response.status}), tokens abbreviated:`)
    say()
    for (const line of JSON.stringify(shown, null, 2).split('\n')) say(`   ${line}`)
    if (typeof tokens.access_token === 'string') {
      const payload = tokens.access_token.split('.')[1]
      if (payload) {
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<
          string,
          unknown
        >
        const { iss, sub, aud, scope, client_id, exp } = claims
        say()
        say(`   The access token is a signed JWT; some of its claims:`)
        say(`   ${JSON.stringify({ iss, sub, aud, scope, client_id, exp })}`)
      }
    }
    say()
    say(`Done: the whole flow, from the authorize URL to the tokens.`)
    return 0
  } finally {
    await callback.close()
  }
}

try {
  process.exitCode = await main()
} catch (err) {
  process.stderr.write(`linkauth demo: ${(err as Error).message}\n`)
  process.exitCode = 1
}
