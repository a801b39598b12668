import { randomBytes } from 'node:crypto'
import type { Client } from '../../src/clients/client.service.js'
import type { Scope } from '../../src/lib/scopes.js'
import { insertAuthorizationCode } from '../../src/grants/authorization-code.repository.js'
import { type Grant, upsertGrant } from '../../src/grants/grant.repository.js'
import { addSeconds } from '../../src/lib/clock.js'
import { s256Challenge } from '../../src/lib/pkce.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from './app.js'
import { createTestClock, type TestClock } from './clock.js'

export const REDIRECT_URI = 'https://app.example/callback'

export interface Party {
  userId: string
  client: Client
  grant: Grant
}

let counter = 0

/** A user, a client registered for `clientScopes`, and the user's grant to it for `grantScopes`. */
export async function createParty(
  t: TestApp,
  options: { clientScopes?: Scope[]; grantScopes?: Scope[]; redirectUri?: string } = {},
): Promise<Party> {
  const user = await t.services.users.createUser({
    email: `user${++counter}-${randomBytes(4).toString('hex')}@example.com`,
    password: 'correct horse battery',
  })
  const client = await t.services.clients.createClient({
    name: 'Fixture App',
    redirect_uris: [options.redirectUri ?? REDIRECT_URI],
    ...(options.clientScopes ? { scopes: options.clientScopes } : {}),
  })
  const grant = await upsertGrant(
    t.database.db,
    { userId: user.id, clientId: client.id, scopes: options.grantScopes ?? ['links:read', 'links:write'] },
    t.clock.now(),
  )
  return { userId: user.id, client, grant }
}

/**
 * A test app on its own database and a test clock that stands at 2026-03-01T12:00Z until a test
 * moves it, and one party (createParty's defaults). The caller closes the app.
 */
export async function appWithParty(): Promise<{ t: TestApp; clock: TestClock; party: Party }> {
  const clock = createTestClock(new Date('2026-03-01T12:00:00Z'))
  const t = await buildTestApp({ clock })
  return { t, clock, party: await createParty(t) }
}

export interface MintedCode {
  code: string
  verifier: string
}

/**
 * What the consent flow (another branch) will do: store an authorization code for the grant, with
 * an S256 challenge of a fresh verifier, expiring AUTH_CODE_TTL from the test clock's now.
 */
export async function mintCode(
  t: TestApp,
  party: Party,
  options: {
    scopes?: string[]
    clientId?: string
    redirectUri?: string
    verifier?: string
    /** RFC 8707: the APIs the authorization request named. */
    resources?: string[]
  } = {},
): Promise<MintedCode> {
  const code = randomToken()
  const verifier = options.verifier ?? randomToken(48)
  const now = t.clock.now()
  await insertAuthorizationCode(t.database.db, {
    codeHash: sha256(code),
    clientId: options.clientId ?? party.client.id,
    userId: party.userId,
    grantId: party.grant.id,
    redirectUri: options.redirectUri ?? party.client.redirectUris[0]!,
    scopes: options.scopes ?? party.grant.scopes,
    codeChallenge: s256Challenge(verifier),
    ...(options.resources ? { resources: options.resources } : {}),
    createdAt: now,
    expiresAt: addSeconds(now, t.config.authCodeTtl),
  })
  return { code, verifier }
}

/** POST /api/oauth/token as a form (the RFC 6749 encoding) or as JSON. */
export function tokenRequest(t: TestApp, params: Record<string, string>, encoding: 'form' | 'json' = 'form') {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    ...(encoding === 'form'
      ? {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams(params).toString(),
        }
      : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(params) }),
  })
}

/** Exchanges a freshly minted code (for `resource`, when named) and returns the token response body. */
export async function exchangeCode(t: TestApp, party: Party, resource?: string): Promise<TokenBody> {
  const { code, verifier } = await mintCode(t, party, resource ? { resources: [resource] } : {})
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: party.client.id,
    ...(resource ? { resource } : {}),
  })
  if (res.statusCode !== 200) throw new Error(`code exchange failed: ${res.body}`)
  return res.json()
}

export interface TokenBody {
  access_token: string
  token_type: string
  expires_in: number
  refresh_token: string
  scope: string
}

/** The claims of a JWT, unverified: for looking at, never for trusting. */
export function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
}
