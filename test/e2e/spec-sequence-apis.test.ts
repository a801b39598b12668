import { randomBytes } from 'node:crypto'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import type { FastifyInstance } from 'fastify'
import * as oauth from 'oauth4webapi'
import { Strategy as OAuth2Strategy } from 'passport-oauth2'
import { AuthorizationCode } from 'simple-oauth2'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { linkauthOpenIdClient } from '../../docs/examples/openid-client.js'
import { buildCommerceApp } from '../../examples/commerce-api/src/app.js'
import { buildLinksApp } from '../../examples/links-api/src/app.js'
import {
  type CommerceTestDatabase,
  createCommerceTestDatabase,
} from '../../examples/commerce-api/test/commerce-database.js'
import {
  createLinksTestDatabase,
  type LinksTestDatabase,
} from '../../examples/links-api/test/links-database.js'
import { s256Challenge } from '../../src/lib/pkce.js'
import { apiCall } from '../helpers/api-call.js'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { freePort } from '../helpers/net.js'
import { COMMERCE_EXAMPLE_API, LINKS_EXAMPLE_API, registerApi } from '../helpers/resource-apis.js'
import { captureLogger } from '../helpers/resource.js'
import { discover, insecure } from '../helpers/oauth4webapi.js'

/**
 * Issue 26: a client that follows only the service spec (§4.4: client_id, scope, redirect_uri,
 * code_challenge at authorize; code, code_verifier, client_id at the token endpoint; no `resource`)
 * gets a token the service's own APIs accept. Four client libraries with the settings the docs give,
 * over real HTTP, against the links API and the commerce API as an operator sets them up (registered
 * with --resource and --scope, each verifying with @linkauth/resource for its own identifier).
 */

const LINKS = LINKS_EXAMPLE_API
const COMMERCE = COMMERCE_EXAMPLE_API

interface Tokens {
  access: string
  refresh: string
  scope: string | undefined
}

/** One client library, driven as its documentation (and docs/integrating.md) says. */
interface Library {
  signIn(scope: string, email: string, clientId: string): Promise<Tokens>
  refresh(refreshToken: string, clientId: string): Promise<Tokens>
}

let t: TestApp
let issuer: string
let linksDb: LinksTestDatabase
let commerceDb: CommerceTestDatabase
const apps: FastifyInstance[] = []
const verifiers: ResourceVerifier[] = []
let linksBase: string
let commerceBase: string
const verifierLogs: ReturnType<typeof captureLogger>[] = []

async function startApi(
  resource: string,
  build: (verifier: ResourceVerifier, publicUrl: string) => Promise<FastifyInstance>,
): Promise<string> {
  const log = captureLogger()
  verifierLogs.push(log)
  const verifier = await createResourceVerifier({
    issuer,
    resource,
    revocationFeed: false,
    logger: log.logger,
  })
  verifiers.push(verifier)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const app = await build(verifier, base)
  apps.push(app)
  await app.listen({ port, host: '127.0.0.1' })
  return base
}

beforeAll(async () => {
  ;({ t, issuer } = await listenTestApp())
  // README's manual setup: each API registered with its resource identifier and the scopes it serves.
  await registerApi(t, LINKS)
  await registerApi(t, COMMERCE)
  linksDb = await createLinksTestDatabase(t.database)
  commerceDb = await createCommerceTestDatabase(t.database)
  linksBase = await startApi(LINKS.resource, (verifier, publicUrl) =>
    buildLinksApp({ config: { publicUrl }, db: linksDb.db, verifier }),
  )
  commerceBase = await startApi(COMMERCE.resource, (verifier, publicUrl) =>
    buildCommerceApp({ config: { publicUrl }, db: commerceDb.db, verifier }),
  )
}, 60_000)
afterAll(async () => {
  for (const app of apps) await app.close()
  for (const verifier of verifiers) await verifier.close()
  await linksDb?.close()
  await commerceDb?.close()
  await t?.close()
})

/** The person's part: sign in and Allow in a browser; returns where the browser was sent back to. */
const consent = (authorizeUrl: URL, email: string) =>
  new HttpBrowser(issuer).signInAndAllow(authorizeUrl.pathname + authorizeUrl.search, email, PASSWORD)

const openIdClient: Library = {
  async signIn(scope, email, clientId) {
    const app = await linkauthOpenIdClient(issuer, clientId, REDIRECT_URI)
    const { url, pending } = await app.startAuthorization(scope)
    const tokens = await app.finishAuthorization(await consent(url, email), pending)
    return { access: tokens.access_token, refresh: tokens.refresh_token!, scope: tokens.scope }
  },
  async refresh(refreshToken, clientId) {
    const tokens = await (await linkauthOpenIdClient(issuer, clientId, REDIRECT_URI)).refresh(refreshToken)
    return { access: tokens.access_token, refresh: tokens.refresh_token!, scope: tokens.scope }
  },
}

async function authorizationServer() {
  const url = new URL(issuer)
  return discover(url)
}
const oauth4webapi: Library = {
  async signIn(scope, email, clientId) {
    const as = await authorizationServer()
    const client: oauth.Client = { client_id: clientId }
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    const params = oauth.validateAuthResponse(as, client, await consent(url, email), state)
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        REDIRECT_URI,
        verifier,
        insecure,
      ),
    )
    return { access: tokens.access_token, refresh: tokens.refresh_token!, scope: tokens.scope }
  },
  async refresh(refreshToken, clientId) {
    const as = await authorizationServer()
    const client: oauth.Client = { client_id: clientId }
    const tokens = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, insecure),
    )
    return { access: tokens.access_token, refresh: tokens.refresh_token!, scope: tokens.scope }
  },
}

/** simple-oauth2 with the settings of docs/integrating.md ("Other client libraries"). */
function simpleOauth2Client(clientId: string) {
  return new AuthorizationCode({
    client: { id: clientId, secret: '' },
    auth: {
      tokenHost: issuer,
      tokenPath: '/api/oauth/token',
      revokePath: '/api/oauth/revoke',
      authorizePath: '/oauth/authorize',
    },
  })
}
const simpleOauth2: Library = {
  async signIn(scope, email, clientId) {
    const library = simpleOauth2Client(clientId)
    const verifier = randomBytes(32).toString('base64url')
    const state = randomBytes(8).toString('hex')
    const url = new URL(
      library.authorizeURL({
        redirect_uri: REDIRECT_URI,
        scope: scope.split(' '),
        state,
        code_challenge: s256Challenge(verifier),
        code_challenge_method: 'S256',
      } as Parameters<AuthorizationCode['authorizeURL']>[0]),
    )
    const callback = await consent(url, email)
    expect(callback.searchParams.get('state')).toBe(state)
    const token = await library.getToken({
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    } as Parameters<AuthorizationCode['getToken']>[0])
    return {
      access: String(token.token.access_token),
      refresh: String(token.token.refresh_token),
      scope: token.token.scope as string,
    }
  },
  async refresh(refreshToken, clientId) {
    const token = await simpleOauth2Client(clientId).createToken({ refresh_token: refreshToken }).refresh()
    return {
      access: String(token.token.access_token),
      refresh: String(token.token.refresh_token),
      scope: token.token.scope as string,
    }
  },
}

/**
 * passport-oauth2 as passport runs it: each request gets an object made from the strategy with
 * Object.create and given redirect/success/fail/error/pass (passport's middleware/authenticate.js),
 * then `authenticate(req, options)`. The first call redirects to the authorization endpoint; the
 * callback's exchanges the code over HTTP (node-oauth) and hands the tokens to the verify function.
 */
type PassportOutcome = { redirect: string } | { user: Tokens }
function runStrategy(strategy: OAuth2Strategy, req: object, options: object): Promise<PassportOutcome> {
  return new Promise((resolve, reject) => {
    const run = Object.create(strategy) as OAuth2Strategy & Record<string, unknown>
    run.redirect = (url: string) => resolve({ redirect: url })
    run.success = (user: Tokens) => resolve({ user })
    run.fail = (challenge: unknown, status?: number) =>
      reject(new Error(`passport fail ${status ?? ''} ${JSON.stringify(challenge)}`))
    run.error = (err: unknown) => reject(err instanceof Error ? err : new Error(JSON.stringify(err)))
    run.pass = () => reject(new Error('passport pass'))
    run.authenticate(req as never, options)
  })
}
/** The settings of docs/integrating.md's passport-oauth2 row; `Strategy` may be a subclass. */
function passportStrategy(clientId: string, Strategy: typeof OAuth2Strategy = OAuth2Strategy) {
  return new Strategy(
    {
      authorizationURL: `${issuer}/oauth/authorize`,
      tokenURL: `${issuer}/api/oauth/token`,
      clientID: clientId,
      clientSecret: '',
      callbackURL: REDIRECT_URI,
      pkce: true,
      state: true,
    },
    (
      accessToken: string,
      refreshToken: string,
      params: { scope?: string },
      _profile: unknown,
      done: (err: unknown, user?: Tokens) => void,
    ) => done(null, { access: accessToken, refresh: refreshToken, scope: params.scope }),
  )
}
const passport: Library = {
  async signIn(scope, email, clientId) {
    const strategy = passportStrategy(clientId)
    const session: Record<string, unknown> = {}
    const first = await runStrategy(strategy, { query: {}, session }, { scope })
    if (!('redirect' in first)) throw new Error('passport-oauth2 did not redirect')
    const callback = await consent(new URL(first.redirect), email)
    const req = { query: Object.fromEntries(callback.searchParams), session }
    const second = await runStrategy(strategy, req, {})
    if (!('user' in second)) throw new Error('passport-oauth2 did not authenticate')
    return second.user
  },
  // passport-oauth2 has no refresh of its own; passport-oauth2-refresh calls its OAuth2 client so.
  refresh(refreshToken, clientId) {
    const client = (
      passportStrategy(clientId) as unknown as {
        _oauth2: {
          getOAuthAccessToken(
            code: string,
            params: object,
            cb: (err: unknown, access: string, refresh: string, result: { scope?: string }) => void,
          ): void
        }
      }
    )._oauth2
    return new Promise((resolve, reject) =>
      client.getOAuthAccessToken(
        refreshToken,
        { grant_type: 'refresh_token' },
        (err, access, refresh, result) =>
          err ? reject(new Error(JSON.stringify(err))) : resolve({ access, refresh, scope: result.scope }),
      ),
    )
  },
}

const links = (method: string, path: string, token: string, body?: unknown) =>
  apiCall(linksBase, method, path, token, { json: body })
const commerce = (method: string, path: string, token: string, body?: unknown) =>
  apiCall(commerceBase, method, path, token, { json: body })

describe('the spec’s sequence, no resource: the token works wherever its scopes say', () => {
  it('both APIs are registered: their verifiers found themselves in protected_resources (no warning)', () => {
    expect(verifierLogs.flatMap((l) => l.lines.filter((line) => line.level === 'warn'))).toEqual([])
  })

  it.each([
    ['openid-client', openIdClient],
    ['oauth4webapi', oauth4webapi],
    ['simple-oauth2', simpleOauth2],
    ['passport-oauth2', passport],
  ] as const)(
    '%s: reads the user’s links from the links API, and the same token works at the commerce API',
    async (_name, library) => {
      const s = await seed(t)
      const tokens = await library.signIn('links:read links:write ecommerce:write', s.email, s.client.id)
      expect(tokens.scope).toBe('links:read links:write ecommerce:write')

      const created = await links('POST', '/api/links', tokens.access, {
        target_url: 'https://example.com/spring',
      })
      expect(created.status).toBe(201)
      const list = await links('GET', '/api/links', tokens.access)
      expect(list.status).toBe(200)
      expect(list.body.links).toEqual([
        expect.objectContaining({ id: created.body.id, target_url: 'https://example.com/spring' }),
      ])
      const shop = await commerce('GET', '/api/links', tokens.access)
      expect(shop.status).toBe(200)

      // A refresh that names no resource follows the same rule.
      const refreshed = await library.refresh(tokens.refresh, s.client.id)
      expect(refreshed.refresh).not.toBe(tokens.refresh)
      expect((await links('GET', '/api/links', refreshed.access)).body.links).toHaveLength(1)
      expect((await commerce('GET', '/api/links', refreshed.access)).status).toBe(200)
    },
  )

  it('links:read alone: refused by the commerce API, 403 insufficient_scope for writes at the links API', async () => {
    const s = await seed(t)
    const tokens = await oauth4webapi.signIn('links:read', s.email, s.client.id)
    expect((await links('GET', '/api/links', tokens.access)).status).toBe(200)
    const write = await links('POST', '/api/links', tokens.access, { target_url: 'https://example.com/' })
    expect(write.status).toBe(403)
    expect(write.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/)
    const shop = await commerce('GET', '/api/links', tokens.access)
    expect(shop.status).toBe(401)
    expect(shop.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    expect(shop.headers.get('www-authenticate')).toContain('The access token is not meant for this API.')
  })
})

describe('naming a resource still gives a token for that API alone', () => {
  it('passport-oauth2 sends resource through authorizationParams and tokenParams overrides', async () => {
    class ResourceStrategy extends OAuth2Strategy {
      override authorizationParams() {
        return { resource: LINKS.resource }
      }
      override tokenParams() {
        return { resource: LINKS.resource }
      }
    }
    const s = await seed(t)
    const strategy = passportStrategy(s.client.id, ResourceStrategy)
    const session: Record<string, unknown> = {}
    const first = await runStrategy(strategy, { query: {}, session }, { scope: 'links:read ecommerce:write' })
    if (!('redirect' in first)) throw new Error('passport-oauth2 did not redirect')
    expect(new URL(first.redirect).searchParams.get('resource')).toBe(LINKS.resource)
    const callback = await consent(new URL(first.redirect), s.email)
    const second = await runStrategy(
      strategy,
      { query: Object.fromEntries(callback.searchParams), session },
      {},
    )
    if (!('user' in second)) throw new Error('passport-oauth2 did not authenticate')
    // The token is for the links API alone, with the granted scopes it serves.
    expect(second.user.scope).toBe('links:read')
    expect((await links('GET', '/api/links', second.user.access)).status).toBe(200)
    expect((await commerce('GET', '/api/links', second.user.access)).status).toBe(401)
  })
})
