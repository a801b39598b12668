/**
 * The demos' shared part: the Authorization Code + PKCE flow against a running linkauth, with a
 * person in a browser. It registers a demo application whose redirect_uri is a tiny callback server
 * on 127.0.0.1, creates a demo user, prints the authorize URL, and when the callback receives the
 * code, swaps it at the token endpoint with the PKCE verifier. Tokens are returned, never printed.
 */
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { CliError, type createAdminClient } from '../src/cli/admin-client.js'

export const say = (line = '') => process.stdout.write(`${line}\n`)

/** DATA_DIR (./.data): where the server keeps its admin token and the demos what they registered. */
export const dataDirOf = (env: NodeJS.ProcessEnv = process.env) => env.DATA_DIR || './.data'

export interface Metadata {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  introspection_endpoint: string
}

export async function metadata(publicUrl: string): Promise<Metadata> {
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
function callbackServer(appName: string) {
  let resolveQuery: (query: URLSearchParams) => void
  const received = new Promise<URLSearchParams>((resolve) => (resolveQuery = resolve))
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (url.pathname !== '/callback') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    const ok = url.searchParams.has('code')
    const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${appName}</title></head><body><main><h1>${
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
    listen: (port: number) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

export interface FlowOptions {
  meta: Metadata
  request: ReturnType<typeof createAdminClient>
  /** The demo application's name, as the consent page and /account/apps show it. */
  appName: string
  /** The callback server's port (0: the one of the kept registration, else any free one). */
  port: number
  timeoutSeconds: number
  /** Where the registration is kept between runs (DATA_DIR). */
  dataDir: string
  /** The API the token is for (RFC 8707 `resource`), sent at authorize and at the token endpoint. */
  resource?: string
  /** The scopes the application is registered for and asks for (default: links:read links:write). */
  scopes?: string[]
}

/** What a demo registered, kept (mode 0600) so that the next run reuses it instead of adding more. */
interface Registration {
  clientId: string
  redirectUri: string
  email: string
  password: string
}

const registrationFile = (options: FlowOptions) =>
  join(options.dataDir, `${options.appName.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.json`)

function keptRegistration(file: string): Registration | undefined {
  if (!existsSync(file)) return undefined
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Registration
  } catch {
    return undefined
  }
}

function keep(file: string, registration: Registration): void {
  mkdirSync(join(file, '..'), { recursive: true })
  writeFileSync(file, JSON.stringify(registration), { mode: 0o600 })
  chmodSync(file, 0o600)
}

/** The callback on DEMO_PORT, else on the kept registration's port when it is free, else anywhere. */
async function listenForCallback(
  callback: ReturnType<typeof callbackServer>,
  port: number,
  kept: Registration | undefined,
): Promise<number> {
  if (port !== 0 || !kept) return callback.listen(port)
  try {
    return await callback.listen(Number(new URL(kept.redirectUri).port))
  } catch {
    return callback.listen(0) // taken: a new registration follows
  }
}

type AdminRequest = ReturnType<typeof createAdminClient>

/** The kept application when it is still enabled with this redirect URI; otherwise a new one (the old one disabled). */
async function demoClient(
  request: AdminRequest,
  options: FlowOptions,
  redirectUri: string,
  kept: Registration | undefined,
): Promise<{ clientId: string; reused: boolean }> {
  if (kept) {
    const clients = (
      await request<{ clients: { client_id: string; disabled_at: string | null }[] }>('GET', '/admin/clients')
    ).clients
    const live = clients.find((c) => c.client_id === kept.clientId && c.disabled_at === null)
    if (live && kept.redirectUri === redirectUri) return { clientId: kept.clientId, reused: true }
    // One live demo application at a time: its redirect URI cannot change, so it gives way.
    if (live) await request('DELETE', `/admin/clients/${encodeURIComponent(kept.clientId)}`)
  }
  const client = await request<{ client_id: string }>('POST', '/admin/clients', {
    name: options.appName,
    redirect_uris: [redirectUri],
    scopes: options.scopes ?? ['links:read', 'links:write'],
  })
  return { clientId: client.client_id, reused: false }
}

/** The kept demo user when it still exists; otherwise a new one. */
async function demoUser(
  request: AdminRequest,
  kept: Registration | undefined,
): Promise<{ email: string; password: string; reused: boolean }> {
  if (kept) {
    const users = (await request<{ users: { email: string }[] }>('GET', '/admin/users')).users
    if (users.some((u) => u.email === kept.email))
      return { email: kept.email, password: kept.password, reused: true }
  }
  const email = `demo-${randomBytes(4).toString('hex')}@example.com`
  const password = `demo-${randomBytes(6).toString('base64url')}`
  await request('POST', '/admin/users', { email, password })
  return { email, password, reused: false }
}

export type FlowResult =
  | { outcome: 'denied' }
  | { outcome: 'token-response'; response: Response; body: Record<string, unknown>; clientId: string }

/** Steps 1 to 4 of a demo, printed as they happen; the token endpoint's answer is returned as is. */
export async function runAuthorizationFlow(options: FlowOptions): Promise<FlowResult> {
  const { meta, request } = options
  const file = registrationFile(options)
  const kept = keptRegistration(file)
  const callback = callbackServer(options.appName)
  const port = await listenForCallback(callback, options.port, kept)
  const redirectUri = `http://127.0.0.1:${port}/callback`
  try {
    const client = await demoClient(request, options, redirectUri, kept)
    const user = await demoUser(request, kept)
    keep(file, { clientId: client.clientId, redirectUri, email: user.email, password: user.password })
    say(
      client.reused
        ? `1. Using the application "${options.appName}" an earlier run registered (kept in ${file})`
        : `1. Registered the application "${options.appName}" (kept in ${file} for the next run)`,
    )
    say(`   client_id:    ${client.clientId}`)
    say(`   redirect_uri: ${redirectUri} (this script listens there)`)
    say(
      user.reused
        ? `2. The demo user to sign in with (from an earlier run)`
        : `2. Created a demo user to sign in with`,
    )
    say(`   Email:    ${user.email}`)
    say(`   Password: ${user.password}`)

    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const state = randomBytes(16).toString('base64url')
    const authorize = new URL(meta.authorization_endpoint)
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: redirectUri,
      scope: (options.scopes ?? ['links:read', 'links:write']).join(' '),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      // The application and user are reused across runs: ask again, so Allow and Deny stay on show.
      prompt: 'consent',
      ...(options.resource ? { resource: options.resource } : {}),
    }).toString()
    say(`3. Open this address in a browser, sign in, and choose Allow (or Deny):`)
    say()
    say(`   ${authorize.href}`)
    say()
    say(`   Waiting for the browser to come back to ${redirectUri} …`)

    const timer = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new CliError(`no callback within ${options.timeoutSeconds} s; run the demo again`, 1)),
        options.timeoutSeconds * 1000,
      ).unref(),
    )
    const query = await Promise.race([callback.received, timer])
    if (query.get('state') !== state) throw new CliError('the callback came back with another state', 1)
    if (query.get('iss') !== meta.issuer) throw new CliError(`the callback's iss is not ${meta.issuer}`, 1)
    const error = query.get('error')
    if (error) {
      say(`4. The callback received error=${error}: ${query.get('error_description') ?? ''}`)
      say(`   That is what an application sees when the person chooses Deny.`)
      return { outcome: 'denied' }
    }
    say(`4. The callback received a code (state and iss match); swapping it at ${meta.token_endpoint}`)
    const response = await fetch(meta.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.get('code') ?? '',
        redirect_uri: redirectUri,
        client_id: client.clientId,
        code_verifier: verifier,
        ...(options.resource ? { resource: options.resource } : {}),
      }),
      signal: AbortSignal.timeout(15_000),
    })
    const body = (await response.json()) as Record<string, unknown>
    return { outcome: 'token-response', response, body, clientId: client.clientId }
  } finally {
    await callback.close()
  }
}
