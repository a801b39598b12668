import * as client from 'openid-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { Browser } from '../helpers/browser.js'
import { answerOnDevicePage, DEVICE_CODE_GRANT_TYPE, seedDevice } from './device-helpers.js'

/**
 * RFC 8628 end to end with openid-client 6 (initiateDeviceAuthorization, pollDeviceAuthorizationGrant)
 * over real HTTP, discovering every endpoint from the metadata; the person's side on /device.
 */

let t: TestApp
let issuer: string
beforeAll(async () => {
  ;({ t, issuer } = await listenTestApp({ env: { DEVICE_CODE_INTERVAL: '1' } }))
})
afterAll(async () => t.close())

async function configFor(clientId: string) {
  return client.discovery(new URL(issuer), clientId, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
    algorithm: 'oauth2',
  })
}

it('the metadata names the device endpoint and grant type', async () => {
  const s = await seedDevice(t)
  const config = await configFor(s.client.id)
  const metadata = config.serverMetadata()
  expect(metadata.device_authorization_endpoint).toBe(`${issuer}/api/oauth/device_authorization`)
  expect(metadata.grant_types_supported).toContain(DEVICE_CODE_GRANT_TYPE)
})

it('openid-client gets tokens after the person allows on /device; they refresh and revoke as any', async () => {
  const s = await seedDevice(t)
  const config = await configFor(s.client.id)
  const started = await client.initiateDeviceAuthorization(config, { scope: 'links:read links:write' })
  expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
  expect(started.verification_uri).toBe(`${issuer}/device`)
  expect(started.verification_uri_complete).toBe(`${issuer}/device?user_code=${started.user_code}`)
  expect(started).toMatchObject({ expires_in: 600, interval: 1 })
  // Device and user codes are stored hashed only.
  const row = await t.database.db.selectFrom('device_authorizations').selectAll().executeTakeFirstOrThrow()
  expect(JSON.stringify(row)).not.toContain(started.device_code)
  expect(JSON.stringify(row)).not.toContain(started.user_code)

  const polling = client.pollDeviceAuthorizationGrant(config, started)
  // Typed in lower case without the hyphen: read back all the same.
  const typed = started.user_code.replace('-', '').toLowerCase()
  const { consent, answer } = await answerOnDevicePage(t, typed, s.email, 'allow', {
    browser: new Browser(t.app),
  })
  expect(consent.body).toContain('another device')
  expect(consent.body).toContain('cli.example')
  expect(answer.statusCode).toBe(200)
  const tokens = await polling
  expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'links:read links:write' })
  expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)

  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
  expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
  await client.tokenRevocation(config, refreshed.refresh_token!)
  const afterRevoke = await client
    .refreshTokenGrant(config, refreshed.refresh_token!)
    .catch((e: unknown) => e)
  expect((afterRevoke as client.ResponseBodyError).error).toBe('invalid_grant')
})

it('openid-client reports access_denied when the person denies', async () => {
  const s = await seedDevice(t)
  const config = await configFor(s.client.id)
  const started = await client.initiateDeviceAuthorization(config, { scope: 'links:read' })
  const polling = client.pollDeviceAuthorizationGrant(config, started).catch((e: unknown) => e)
  const { answer } = await answerOnDevicePage(t, started.user_code, s.email, 'deny')
  expect(answer.body).toContain('Request denied')
  const refused = await polling
  expect(refused).toBeInstanceOf(client.ResponseBodyError)
  expect((refused as client.ResponseBodyError).error).toBe('access_denied')
})
