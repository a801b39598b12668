import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { createParty, mintCode, type Party, REDIRECT_URI } from '../helpers/fixtures.js'
import { discover, insecure } from '../helpers/oauth4webapi.js'

// The issuer must be the address the client reaches, so the app is built for a port found first.
let t: TestApp
let party: Party
let issuer: URL
let clock: TestClock
beforeAll(async () => {
  clock = createTestClock()
  ;({ t } = await listenTestApp({ clock }))
  issuer = new URL(t.config.issuer)
  party = await createParty(t)
})
afterAll(async () => {
  await t.close()
})

describe('GET /.well-known/oauth-authorization-server', () => {
  it('describes this server (RFC 8414)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    expect(res.statusCode).toBe(200)
    const base = t.config.issuer
    expect(res.json()).toEqual({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/api/oauth/token`,
      device_authorization_endpoint: `${base}/api/oauth/device_authorization`,
      revocation_endpoint: `${base}/api/oauth/revoke`,
      introspection_endpoint: `${base}/api/oauth/introspect`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      scopes_supported: ['links:read', 'links:write', 'ecommerce:write', 'products:sync'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      ui_locales_supported: ['en', 'de', 'fr', 'es', 'ja', 'ar'],
      revocation_endpoint_auth_methods_supported: ['none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic'],
      authorization_response_iss_parameter_supported: true,
      revocation_event_streams_endpoint: `${base}/api/events/streams`,
      protected_resources: [],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'PS256'],
      client_id_metadata_document_supported: true,
      registration_endpoint: `${base}/api/oauth/register`,
      pushed_authorization_request_endpoint: `${base}/api/oauth/par`,
      require_pushed_authorization_requests: false,
    })
  })
})

describe('oauth4webapi as the third-party client', () => {
  it('discovers, exchanges a code, validates the JWT, and refreshes', async () => {
    const as = await discover(issuer)
    expect(as.issuer).toBe(t.config.issuer)
    const client: oauth.Client = { client_id: party.client.id }

    // What the browser would bring back from /oauth/authorize (that step lives on another branch).
    const minted = await mintCode(t, party)
    const callback = new URL(REDIRECT_URI)
    callback.searchParams.set('code', minted.code)
    callback.searchParams.set('iss', as.issuer)
    const params = oauth.validateAuthResponse(as, client, callback, oauth.expectNoState)

    const exchanged = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        REDIRECT_URI,
        minted.verifier,
        {
          ...insecure,
        },
      ),
    )
    expect(exchanged.token_type).toBe('bearer') // oauth4webapi lower-cases it
    expect(exchanged.scope).toBe('links:read links:write')
    expect(exchanged.refresh_token).toBeTruthy()

    // A resource server's view: RFC 9068 validation against our JWKS.
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request('https://api.example/links', {
        headers: { authorization: `Bearer ${exchanged.access_token}` },
      }),
      t.config.accessTokenAudience,
      { ...insecure },
    )
    expect(claims).toMatchObject({ sub: party.userId, client_id: party.client.id, iss: t.config.issuer })

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), exchanged.refresh_token!, {
        ...insecure,
      }),
    )
    expect(refreshed.access_token).not.toBe(exchanged.access_token)
    expect(refreshed.refresh_token).not.toBe(exchanged.refresh_token)

    // The rotated-away refresh token, after the retry window, is refused, as oauth4webapi sees it.
    clock.advance(t.config.refreshReuseWindow)
    const reused = oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), exchanged.refresh_token!, {
        ...insecure,
      }),
    )
    await expect(reused).rejects.toMatchObject({ error: 'invalid_grant' })
  })
})
