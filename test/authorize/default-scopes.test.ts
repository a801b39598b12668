import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { Browser, locationParams, VERIFIER } from '../helpers/browser.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { tokenRequest } from '../helpers/fixtures.js'
import { LINKS_API, registerApi, SHOP_API } from '../helpers/resource-apis.js'
import { allow, appWithUser, authorizeAndSignIn } from '../registration/setup.js'
import { consentScopes, REDIRECT, register, request } from './default-scopes-setup.js'

/**
 * Issue 38 §2 and §3: a request without `scope` gets the client's default scopes (RFC 6749 §3.3):
 * the operator's choice for a registered client (else all its scopes), the registered scope of a
 * dynamic registration, the stated scope of a metadata document, within the operator's policy, and
 * with `resource` only those the named APIs serve. A self-registered client's scope is its default,
 * not its ceiling: it steps up within the policy without registering again.
 */

let server: DocumentServer
let t: TestApp
let email: string
beforeAll(async () => {
  server = await startDocumentServer()
  ;({ t, email } = await appWithUser('defaults', { env: { CLIENT_METADATA_TEST_CA: server.caPath } }))
  await registerApi(t, LINKS_API)
  await registerApi(t, SHOP_API)
})
afterAll(async () => {
  await t.close()
  await server.close()
})

/** Consent shown, allowed, code exchanged: the token answer's scope. */
async function allowAndExchange(
  app: TestApp,
  clientId: string,
  browser: Browser,
  page: LightMyRequestResponse,
): Promise<{ scope: string; refresh_token: string }> {
  const code = locationParams(await allow(browser, page)).code!
  const res = await tokenRequest(app, {
    grant_type: 'authorization_code',
    code,
    code_verifier: VERIFIER,
    client_id: clientId,
    redirect_uri: REDIRECT,
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

async function operatorClient(body: Record<string, unknown>) {
  const res = await t.admin.inject({
    method: 'POST',
    url: '/admin/clients',
    headers: adminHeaders,
    payload: { name: 'Operator App', redirect_uris: [REDIRECT], ...body },
  })
  return res
}

let published = 0
function publish(fields: Record<string, unknown> = {}): string {
  const path = `/defaults/${++published}.json`
  const id = server.url(path)
  server.publish(path, clientDocument(id, { redirect_uris: [REDIRECT], ...fields }))
  return id
}

async function clientRow(id: string) {
  return t.database.db
    .selectFrom('clients')
    .select(['scopes', 'default_scopes'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
}

describe('an operator-registered client', () => {
  it('without defaults set: a request without scope gets all its scopes, shown on the consent page', async () => {
    const created = await operatorClient({ scopes: ['links:write', 'links:read'] })
    expect(created.json().default_scopes).toEqual(['links:read', 'links:write'])
    const id = created.json().client_id
    const { browser, page } = await authorizeAndSignIn(t, email, request(id))
    expect(consentScopes(page)).toEqual(['links:read', 'links:write'])
    expect((await allowAndExchange(t, id, browser, page)).scope).toBe('links:read links:write')
  })

  it('with the operator’s defaults: those; a scope named is still any of its scopes', async () => {
    const created = await operatorClient({ default_scopes: ['links:read'] })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({
      scopes: ['links:read', 'links:write', 'ecommerce:write', 'products:sync'],
      default_scopes: ['links:read'],
    })
    const id = created.json().client_id
    const { browser, page } = await authorizeAndSignIn(t, email, request(id))
    expect(consentScopes(page)).toEqual(['links:read'])
    const token = await allowAndExchange(t, id, browser, page)
    expect(token.scope).toBe('links:read')

    // Refresh as today: without scope, the whole grant of the family.
    const refreshed = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: token.refresh_token,
      client_id: id,
    })
    expect(refreshed.json().scope).toBe('links:read')

    const asked = await authorizeAndSignIn(t, email, request(id, { scope: 'products:sync' }))
    expect(consentScopes(asked.page)).toEqual(['products:sync'])
  })

  it('the admin API keeps the defaults among the scopes; null goes back to all of them', async () => {
    const outside = await operatorClient({ scopes: ['links:read'], default_scopes: ['links:write'] })
    expect(outside.statusCode).toBe(400)
    expect(outside.json().detail).toContain('default_scopes must be among the client')
    const unknown = await operatorClient({ default_scopes: ['admin'] })
    expect(unknown.statusCode).toBe(400)

    const id = (await operatorClient({ default_scopes: ['links:write'] })).json().client_id
    const patch = (payload: Record<string, unknown>) =>
      t.admin.inject({ method: 'PATCH', url: `/admin/clients/${id}`, headers: adminHeaders, payload })
    // Narrowing the scopes below the defaults needs the defaults too.
    expect((await patch({ scopes: ['links:read'] })).statusCode).toBe(400)
    expect((await clientRow(id)).default_scopes).toEqual(['links:write'])
    const both = await patch({ scopes: ['links:read', 'links:write'], default_scopes: ['links:read'] })
    expect(both.json()).toMatchObject({
      scopes: ['links:read', 'links:write'],
      default_scopes: ['links:read'],
    })
    const reset = await patch({ default_scopes: null })
    expect(reset.json().default_scopes).toEqual(['links:read', 'links:write'])
    expect((await clientRow(id)).default_scopes).toBeNull()
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('client_id', '=', id)
      .where('event_type', '=', 'client.updated')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    expect(audit.details).toMatchObject({ default_scopes: null, previous_default_scopes: ['links:read'] })
  })

  it('with resource: only the defaults that API serves; none of them → invalid_scope', async () => {
    const all = (await operatorClient({})).json().client_id
    const shop = await authorizeAndSignIn(t, email, request(all, { resource: SHOP_API.resource }))
    expect(consentScopes(shop.page)).toEqual(['ecommerce:write', 'products:sync'])

    const reader = (await operatorClient({ default_scopes: ['links:read'] })).json().client_id
    const refused = await new Browser(t.app).get(
      `/oauth/authorize?${new URLSearchParams(request(reader, { resource: SHOP_API.resource }))}`,
    )
    expect(refused.statusCode).toBe(302)
    expect(locationParams(refused)).toMatchObject({ error: 'invalid_scope', state: 'st' })
    expect(locationParams(refused).error_description).toContain('default scopes')
    const links = await authorizeAndSignIn(t, email, request(reader, { resource: LINKS_API.resource }))
    expect(consentScopes(links.page)).toEqual(['links:read'])
  })
})

describe('a dynamic registration', () => {
  it('gets its registered scope without asking, and steps up within the policy without registering again', async () => {
    const registered = await register(t, { scope: 'links:read' })
    // RFC 7591: the registered scope is what it asked for; the ceiling is the operator's policy.
    expect(registered.scope).toBe('links:read')
    const id = registered.client_id
    expect(await clientRow(id)).toEqual({
      scopes: ['links:read', 'links:write', 'ecommerce:write', 'products:sync'],
      default_scopes: ['links:read'],
    })
    const first = await authorizeAndSignIn(t, email, request(id))
    expect(consentScopes(first.page)).toEqual(['links:read'])
    expect((await allowAndExchange(t, id, first.browser, first.page)).scope).toBe('links:read')

    // After a 403 insufficient_scope: the union, asked of the person, on the same client.
    const wider = await authorizeAndSignIn(t, email, request(id, { scope: 'links:read links:write' }))
    expect(consentScopes(wider.page)).toEqual(['links:read', 'links:write'])
    expect((await allowAndExchange(t, id, wider.browser, wider.page)).scope).toBe('links:read links:write')
    const grants = await t.database.db
      .selectFrom('grants')
      .select('scopes')
      .where('client_id', '=', id)
      .where('revoked_at', 'is', null)
      .execute()
    expect(grants).toEqual([{ scopes: ['links:read', 'links:write'] }])
    // Signed in, under that grant: a request without scope gets its code at once (remembered consent).
    const again = await wider.browser.get(`/oauth/authorize?${new URLSearchParams(request(id))}`)
    expect(again.statusCode).toBe(302)
    expect(locationParams(again).code).toBeTruthy()

    const read = await t.app.inject({
      url: `/api/oauth/register/${id}`,
      headers: { authorization: `Bearer ${registered.registration_access_token}` },
    })
    expect(read.json().scope).toBe('links:read')
  })

  it('with resource: its registered scopes that API serves', async () => {
    const id = (await register(t, { scope: 'links:read products:sync' })).client_id
    const { page } = await authorizeAndSignIn(t, email, request(id, { resource: LINKS_API.resource }))
    expect(consentScopes(page)).toEqual(['links:read'])
  })
})

describe('a metadata-document client', () => {
  it('gets its stated scope without asking, and steps up without a new document', async () => {
    const id = publish({ scope: 'links:read' })
    const first = await authorizeAndSignIn(t, email, request(id))
    expect(consentScopes(first.page)).toEqual(['links:read'])
    expect((await allowAndExchange(t, id, first.browser, first.page)).scope).toBe('links:read')
    expect((await clientRow(id)).default_scopes).toEqual(['links:read'])

    const wider = await authorizeAndSignIn(t, email, request(id, { scope: 'links:read links:write' }))
    expect(consentScopes(wider.page)).toEqual(['links:read', 'links:write'])
    expect((await allowAndExchange(t, id, wider.browser, wider.page)).scope).toBe('links:read links:write')
  })

  it('stating no scope of ours: all the policy gives', async () => {
    const id = publish({ scope: 'openid profile' })
    const { page } = await authorizeAndSignIn(t, email, request(id))
    expect(consentScopes(page)).toEqual(['links:read', 'links:write', 'ecommerce:write', 'products:sync'])
  })
})

describe('the operator’s policy (CLIENT_METADATA_SCOPES) is the ceiling', () => {
  let limited: TestApp
  beforeAll(async () => {
    limited = await buildTestApp({
      database: t.database,
      env: {
        ...GENEROUS_LIMITS,
        CLIENT_METADATA_TEST_CA: server.caPath,
        CLIENT_METADATA_SCOPES: 'links:read links:write',
      },
    })
  })
  afterAll(async () => {
    await limited.app.close()
    await limited.admin.close()
  })

  it.each([
    ['a dynamic registration', async () => (await register(limited, { scope: 'links:read' })).client_id],
    ['a metadata-document client', async () => publish({ scope: 'links:read' })],
  ])('%s: a scope beyond it → invalid_scope; its defaults within it', async (_kind, make) => {
    const id = await make()
    const beyond = await new Browser(limited.app).get(
      `/oauth/authorize?${new URLSearchParams(request(id, { scope: 'links:read products:sync' }))}`,
    )
    expect(beyond.statusCode).toBe(302)
    expect(locationParams(beyond).error).toBe('invalid_scope')
    const { page } = await authorizeAndSignIn(limited, email, request(id))
    expect(consentScopes(page)).toEqual(['links:read'])
    const wider = await authorizeAndSignIn(limited, email, request(id, { scope: 'links:read links:write' }))
    expect(consentScopes(wider.page)).toEqual(['links:read', 'links:write'])
  })

  it('narrowed after a registration: it bounds that registration too, its defaults included', async () => {
    // Registered under the unlimited policy of `t`; asked under the narrower one of `limited`.
    const id = (await register(t, { scope: 'products:sync' })).client_id
    for (const extra of [{ scope: 'products:sync' }, {}] as Record<string, string>[]) {
      const res = await new Browser(limited.app).get(
        `/oauth/authorize?${new URLSearchParams(request(id, extra))}`,
      )
      expect(res.statusCode).toBe(302)
      expect(locationParams(res).error).toBe('invalid_scope')
    }
    const { page } = await authorizeAndSignIn(limited, email, request(id, { scope: 'links:write' }))
    expect(consentScopes(page)).toEqual(['links:write'])
  })

  it('a document stating no scope gets the policy’s scopes by default', async () => {
    const id = publish()
    const { page } = await authorizeAndSignIn(limited, email, request(id))
    expect(consentScopes(page)).toEqual(['links:read', 'links:write'])
  })
})
