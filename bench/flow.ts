import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto'
import type autocannon from 'autocannon'
import type { BenchServer } from './server.js'

/** What the scenarios need: a registered client, a signed-in browser session and a remembered consent. */
export interface BenchParty {
  clientId: string
  redirectUri: string
  cookie: string
  verifier: string
  challenge: string
  authorizePath: string
}

// An https redirect URI: a loopback one gets a one-click confirmation on every return (RFC 8252 §8.6).
export const BENCH_REDIRECT_URI = 'https://bench.example/callback'

/** POST to the admin API of the bench server. */
export async function admin<T>(server: BenchServer, path: string, body: unknown): Promise<T> {
  const res = await fetch(server.adminUrl + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

class Jar {
  private readonly cookies = new Map<string, string>()
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1))
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }
}

const hidden = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ''

/**
 * Registers a client (or uses `clientId`, e.g. a client_id URL naming a metadata document whose
 * redirect URI is BENCH_REDIRECT_URI) and a user, signs in through the real pages, and says Allow once.
 */
export async function prepareParty(
  server: BenchServer,
  scope = 'links:read links:write',
  clientId?: string,
): Promise<BenchParty> {
  const client = clientId
    ? { client_id: clientId }
    : await admin<{ client_id: string }>(server, '/admin/clients', {
        name: 'Bench App',
        redirect_uris: [BENCH_REDIRECT_URI],
      })
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`
  const password = 'bench password 123'
  await admin(server, '/admin/users', { email, password })

  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const authorizePath = `/oauth/authorize?${new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: BENCH_REDIRECT_URI,
    scope,
    code_challenge: challenge,
  })}`

  const jar = new Jar()
  const get = async (path: string) => {
    const res = await fetch(server.baseUrl + path, { redirect: 'manual', headers: { cookie: jar.header() } })
    jar.take(res)
    return res
  }
  const post = async (path: string, form: Record<string, string>) => {
    const res = await fetch(server.baseUrl + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    })
    jar.take(res)
    return res
  }

  const toLogin = await get(authorizePath)
  const loginPage = await (await get(toLogin.headers.get('location')!)).text()
  const afterLogin = await post('/login', {
    email,
    password,
    csrf_token: hidden(loginPage, 'csrf_token'),
    request: hidden(loginPage, 'request'),
  })
  const consentPage = await (await get(afterLogin.headers.get('location')!)).text()
  const decided = await post('/oauth/authorize', {
    request: hidden(consentPage, 'request'),
    csrf_token: hidden(consentPage, 'csrf_token'),
    decision: 'allow',
  })
  if (!decided.headers.get('location')?.includes('code='))
    throw new Error('bench: consent did not yield a code')
  return {
    clientId: client.client_id,
    redirectUri: BENCH_REDIRECT_URI,
    cookie: jar.header(),
    verifier,
    challenge,
    authorizePath,
  }
}

/** Mints codes through the real authorize endpoint (remembered consent), `concurrency` at a time. */
export async function mintCodes(
  server: BenchServer,
  party: BenchParty,
  count: number,
  concurrency = 32,
): Promise<string[]> {
  const codes: string[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++
        const res = await fetch(server.baseUrl + party.authorizePath, {
          redirect: 'manual',
          headers: { cookie: party.cookie },
        })
        const code = new URL(res.headers.get('location')!).searchParams.get('code')
        if (!code) throw new Error(`bench: authorize answered ${res.status} without a code`)
        codes.push(code)
      }
    }),
  )
  return codes
}

/** Exchanges codes for token pairs; returns the refresh tokens and access tokens. */
export async function exchangeCodes(
  server: BenchServer,
  party: BenchParty,
  codes: string[],
  concurrency = 32,
  dpop?: () => string,
): Promise<{ refreshTokens: string[]; accessTokens: string[] }> {
  const refreshTokens: string[] = []
  const accessTokens: string[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < codes.length) {
        const code = codes[next++]!
        const res = await fetch(`${server.baseUrl}/api/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop ? { dpop: dpop() } : {}) },
          body: new URLSearchParams({
            code,
            code_verifier: party.verifier,
            client_id: party.clientId,
          }).toString(),
        })
        const body = (await res.json()) as { refresh_token: string; access_token: string }
        if (!res.ok) throw new Error(`bench: token answered ${res.status}`)
        refreshTokens.push(body.refresh_token)
        accessTokens.push(body.access_token)
      }
    }),
  )
  return { refreshTokens, accessTokens }
}

/**
 * An autocannon request that refreshes in chains: it takes an idle refresh token, and puts the
 * successor back when the answer comes, so no token is ever in two requests at once. (autocannon
 * resets a connection's context at every pass over its request list, so the chain lives here.)
 */
export function refreshChainRequest(party: BenchParty, refreshTokens: string[], dpop?: () => string) {
  const idle = [...refreshTokens]
  return {
    method: 'POST' as const,
    path: '/api/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    setupRequest: (req: autocannon.Request) => ({
      ...req,
      ...(dpop ? { headers: { ...req.headers, dpop: dpop() } } : {}),
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: idle.shift() ?? 'no idle refresh token: raise the number of chains',
        client_id: party.clientId,
      }).toString(),
    }),
    onResponse: (status: number, body: string) => {
      if (status === 200) idle.push((JSON.parse(body) as { refresh_token: string }).refresh_token)
    },
  }
}

/**
 * A DPoP client's key (RFC 9449): one P-256 key, a fresh proof per call for a method and URL (with
 * `ath` when an access token is sent), signed with node:crypto synchronously (autocannon's
 * setupRequest cannot wait), so the bench client's own cost stays small beside the server's.
 */
export interface DpopKey {
  proof(method: string, url: string, accessToken?: string): string
}

export function dpopKey(): DpopKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const header = Buffer.from(
    JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicKey.export({ format: 'jwk' }) }),
  ).toString('base64url')
  return {
    proof(method, url, accessToken) {
      const claims = {
        jti: randomUUID(),
        htm: method,
        htu: url,
        iat: Math.floor(Date.now() / 1000),
        ...(accessToken ? { ath: createHash('sha256').update(accessToken).digest('base64url') } : {}),
      }
      const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
      const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' })
      return `${input}.${signature.toString('base64url')}`
    },
  }
}

/** Proofs of one key for POSTs to `url` (the token endpoint). */
export function dpopProofs(url: string, key: DpopKey = dpopKey()): () => string {
  return () => key.proof('POST', url)
}

/** Registers a resource server; answers its HTTP Basic credentials for introspection. */
export async function registerResourceServer(server: BenchServer): Promise<string> {
  const { id, secret } = await admin<{ id: string; secret: string }>(server, '/admin/resource-servers', {
    name: 'Bench API',
  })
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`
}

/** POST /api/oauth/introspect as `basic`, with the given tokens in turn. */
export function introspectionRequest(basic: string, tokens: string[]) {
  let next = 0
  return {
    method: 'POST' as const,
    path: '/api/oauth/introspect',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    setupRequest: (req: object) => ({
      ...req,
      body: `token=${encodeURIComponent(tokens[next++ % tokens.length]!)}`,
    }),
  }
}

/**
 * POST /api/oauth/token exchanging each of `codes` once (autocannon `amount`: the run ends when they
 * are spent), optionally with a DPoP proof per request.
 */
export function exchangeRequest(
  server: BenchServer,
  party: BenchParty,
  codes: string[],
  dpop?: () => string,
): autocannon.Options {
  let next = 0
  return {
    url: `${server.baseUrl}/api/oauth/token`,
    method: 'POST',
    amount: codes.length,
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            ...(dpop ? { dpop: dpop() } : {}),
          },
          body: new URLSearchParams({
            code: codes[next++] ?? 'exhausted',
            code_verifier: party.verifier,
            client_id: party.clientId,
          }).toString(),
        }),
      },
    ],
  }
}

/**
 * POST /api/oauth/revoke (RFC 7009) of each of `refreshTokens` once, as their public client: each
 * revokes its family (and writes its revocation event); the run ends when they are spent.
 */
export function revocationRequest(
  server: BenchServer,
  party: BenchParty,
  refreshTokens: string[],
): autocannon.Options {
  let next = 0
  return {
    url: server.baseUrl,
    amount: refreshTokens.length,
    requests: [
      {
        method: 'POST',
        path: '/api/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (req) => ({
          ...req,
          body: new URLSearchParams({
            token: refreshTokens[next++] ?? 'exhausted',
            token_type_hint: 'refresh_token',
            client_id: party.clientId,
          }).toString(),
        }),
      },
    ],
  }
}

/** GET /account/apps: the account page's list of connected applications, as the signed-in bench user. */
export function accountAppsRequest(server: BenchServer, party: BenchParty): autocannon.Options {
  return { url: `${server.baseUrl}/account/apps`, headers: { cookie: party.cookie } }
}
