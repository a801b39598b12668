import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/main.js'
import { adminHeaders, buildTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import { dpopKey, dpopProof } from '../helpers/dpop.js'
import { createParty, mintCode } from '../helpers/fixtures.js'
import { checkResponse, createValidator, type OpenApiDocument } from '../helpers/openapi.js'
import { basicAuth, createResourceServer } from '../helpers/tokens.js'

/**
 * The per-client DPoP requirement through the admin API and the CLI, and the DPoP answers of the
 * public API, each checked against the OpenAPI documents.
 */
let t: TestApp
let adminUrl: string
let publicDoc: OpenApiDocument
let adminDoc: OpenApiDocument
const ajv = createValidator()
beforeAll(async () => {
  t = await buildTestApp({ env: { DPOP_NONCE_REQUIRED: 'true' } })
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
  publicDoc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  adminDoc = (await t.admin.inject({ method: 'GET', url: '/openapi.json', headers: adminHeaders })).json()
})
afterAll(async () => t.close())

const createClient = (payload: object) =>
  t.admin.inject({ method: 'POST', url: '/admin/clients', headers: adminHeaders, payload })

describe('require_dpop in the admin API', () => {
  it('is false by default, true when asked, shown by GET, as documented', async () => {
    const plain = await createClient({ name: 'Plain', redirect_uris: ['https://app.example/cb'] })
    expect(plain.json().require_dpop).toBe(false)
    const strict = await createClient({
      name: 'Strict',
      redirect_uris: ['https://app.example/cb'],
      require_dpop: true,
    })
    expect(strict.statusCode).toBe(201)
    expect(checkResponse(adminDoc, ajv, 'POST /admin/clients', strict)).toEqual([])
    const shown = await t.admin.inject({
      method: 'GET',
      url: `/admin/clients/${strict.json().client_id}`,
      headers: adminHeaders,
    })
    expect(shown.json().require_dpop).toBe(true)
    expect(checkResponse(adminDoc, ajv, 'GET /admin/clients/{id}', shown)).toEqual([])
  })

  it('refuses a value that is not a boolean, naming the field', async () => {
    const res = await createClient({
      name: 'X',
      redirect_uris: ['https://app.example/cb'],
      require_dpop: 'yes',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().field).toBe('require_dpop')
    expect(checkResponse(adminDoc, ajv, 'POST /admin/clients', res)).toEqual([])
  })

  it('the CLI sets it with --require-dpop and shows it', async () => {
    const out: string[] = []
    const code = await runCli(
      [
        'clients',
        'create',
        '--name',
        'CLI Strict',
        '--redirect-uri',
        'https://cli.example/cb',
        '--require-dpop',
      ],
      {
        out: (s) => out.push(s),
        err: (s) => out.push(s),
        env: { LINKAUTH_ADMIN_URL: adminUrl, ADMIN_TOKEN: TEST_ADMIN_TOKEN, DATA_DIR: '/nonexistent' },
      },
    )
    expect(code).toBe(0)
    expect(out.join('\n')).toContain('require_dpop:  true')
    const help: string[] = []
    await runCli(['clients', 'create', '--help'], {
      out: (s) => help.push(s),
      err: (s) => help.push(s),
      env: {},
    })
    expect(help.join('\n')).toContain('--require-dpop')
  })
})

describe('DPoP answers of the public API, as documented', () => {
  it('use_dpop_nonce, then token_type DPoP, then introspection with cnf', async () => {
    const key = await dpopKey()
    const party = await createParty(t)
    const code = await mintCode(t, party)
    const send = (nonce?: string) =>
      dpopProof(key, { issuer: t.config.issuer, now: t.clock.now(), claims: { nonce } }).then((dpop) =>
        t.app.inject({
          method: 'POST',
          url: '/api/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded', dpop },
          payload: new URLSearchParams({
            grant_type: 'authorization_code',
            code: code.code,
            code_verifier: code.verifier,
            client_id: party.client.id,
          }).toString(),
        }),
      )
    const first = await send()
    expect(first.json().error).toBe('use_dpop_nonce')
    expect(checkResponse(publicDoc, ajv, 'POST /api/oauth/token', first)).toEqual([])
    const ok = await send(first.headers['dpop-nonce'] as string)
    expect(ok.json().token_type).toBe('DPoP')
    expect(checkResponse(publicDoc, ajv, 'POST /api/oauth/token', ok)).toEqual([])

    const rs = await createResourceServer(t)
    const introspected = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/introspect',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(rs.id, rs.secret),
      },
      payload: `token=${ok.json().access_token}`,
    })
    expect(introspected.json()).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: expect.any(String) },
    })
    expect(checkResponse(publicDoc, ajv, 'POST /api/oauth/introspect', introspected)).toEqual([])
  })
})
