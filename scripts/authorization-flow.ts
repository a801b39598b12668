/**
 * The demos' shared part: the Authorization Code + PKCE flow against a running linkauth, with a
 * person in a browser. It registers a demo application whose redirect_uri is a tiny callback server
 * on 127.0.0.1, creates a demo user, prints the authorize URL, and when the callback receives the
 * code, swaps it at the token endpoint with the PKCE verifier. Tokens are returned, never printed.
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { CliError, type createAdminClient } from '../src/cli/admin-client.js'

export const say = (line = '') => process.stdout.write(`${line}\n`)

/** The admin token: ADMIN_TOKEN, or the file the server wrote into DATA_DIR (./.data). */
export function adminToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN
  const path = join(env.DATA_DIR || './.data', 'admin-token')
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined
}

export interface Metadata {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
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
function callbackServer(port: number, appName: string) {
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
    listen: () =>
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
  /** The callback server's port (0: any free one). */
  port: number
  timeoutSeconds: number
}

export type FlowResult =
  | { outcome: 'denied' }
  | { outcome: 'token-response'; response: Response; body: Record<string, unknown>; clientId: string }

/** Steps 1 to 4 of a demo, printed as they happen; the token endpoint's answer is returned as is. */
export async function runAuthorizationFlow(options: FlowOptions): Promise<FlowResult> {
  const { meta, request } = options
  const callback = callbackServer(options.port, options.appName)
  const port = await callback.listen()
  const redirectUri = `http://127.0.0.1:${port}/callback`
  try {
    const client = await request<{ client_id: string }>('POST', '/admin/clients', {
      name: options.appName,
      redirect_uris: [redirectUri],
      scopes: ['links:read', 'links:write'],
    })
    say(`1. Registered the application "${options.appName}"`)
    say(`   client_id:    ${client.client_id}`)
    say(`   redirect_uri: ${redirectUri} (this script listens there)`)

    const email = `demo-${randomBytes(4).toString('hex')}@example.com`
    const password = `demo-${randomBytes(6).toString('base64url')}`
    await request('POST', '/admin/users', { email, password })
    say(`2. Created a demo user to sign in with`)
    say(`   Email:    ${email}`)
    say(`   Password: ${password}`)

    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const state = randomBytes(16).toString('base64url')
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
        client_id: client.client_id,
        code_verifier: verifier,
      }),
      signal: AbortSignal.timeout(15_000),
    })
    const body = (await response.json()) as Record<string, unknown>
    return { outcome: 'token-response', response, body, clientId: client.client_id }
  } finally {
    await callback.close()
  }
}
