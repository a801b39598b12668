import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as m0022 from '../../migrations/0022_dynamic_scope_ceiling.js'
import type { TestApp } from '../helpers/app.js'
import { Browser, locationParams } from '../helpers/browser.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { LINKS_API, registerApi, SHOP_API } from '../helpers/resource-apis.js'
import { appWithUser, authorizeAndSignIn } from '../registration/setup.js'
import { consentScopes, REDIRECT, register, request } from './default-scopes-setup.js'

/**
 * Issue 37 part 4: the operator's default scopes by how an application came in
 * (CLIENT_METADATA_DEFAULT_SCOPES, DYNAMIC_REGISTRATION_DEFAULT_SCOPES), for a request without
 * `scope` of an application that stated none of its own; and dynamic registrations from before
 * migration 0020, whose registered scope was their ceiling, made to step up within the policy as
 * those registered since (migration 0022).
 */

let server: DocumentServer
let t: TestApp
let email: string
beforeAll(async () => {
  server = await startDocumentServer()
  ;({ t, email } = await appWithUser('operator-defaults', {
    env: {
      CLIENT_METADATA_TEST_CA: server.caPath,
      CLIENT_METADATA_SCOPES: 'links:read links:write products:sync',
      CLIENT_METADATA_DEFAULT_SCOPES: 'links:read',
      DYNAMIC_REGISTRATION_SCOPES: 'links:read links:write',
      DYNAMIC_REGISTRATION_DEFAULT_SCOPES: 'links:read',
    },
  }))
  await registerApi(t, LINKS_API)
  await registerApi(t, SHOP_API)
})
afterAll(async () => {
  await t.close()
  await server.close()
})

let published = 0
function publish(fields: Record<string, unknown> = {}): string {
  const path = `/operator-defaults/${++published}.json`
  const id = server.url(path)
  server.publish(path, clientDocument(id, { redirect_uris: [REDIRECT], ...fields }))
  return id
}

/** The consent page's scopes for a request of `id` (with `scope` when given). */
async function consentFor(id: string, extra: Record<string, string> = {}) {
  return consentScopes((await authorizeAndSignIn(t, email, request(id, extra))).page)
}

/** The error an authorization request is redirected back with (the browser never signs in). */
async function refusal(id: string, extra: Record<string, string>) {
  const res = await new Browser(t.app).get(`/oauth/authorize?${new URLSearchParams(request(id, extra))}`)
  expect(res.statusCode).toBe(302)
  return locationParams(res).error
}

describe('the operator’s default scopes, by kind', () => {
  it('a dynamic registration that stated no scope gets DYNAMIC_REGISTRATION_DEFAULT_SCOPES, and may ask for the rest of its maximum', async () => {
    const { client_id: id } = await register(t, {})
    expect(await consentFor(id)).toEqual(['links:read'])
    expect(await consentFor(id, { scope: 'links:read links:write' })).toEqual(['links:read', 'links:write'])
    expect(await refusal(id, { scope: 'products:sync' })).toBe('invalid_scope')
  })

  it('a metadata document that stated no scope of ours gets CLIENT_METADATA_DEFAULT_SCOPES', async () => {
    for (const id of [publish(), publish({ scope: 'openid profile' })]) {
      expect(await consentFor(id)).toEqual(['links:read'])
      expect(await consentFor(id, { scope: 'products:sync' })).toEqual(['products:sync'])
    }
  })

  it('an application’s own stated scope stays its default', async () => {
    const { client_id: dynamic } = await register(t, { scope: 'links:write' })
    expect(await consentFor(dynamic)).toEqual(['links:write'])
    expect(await consentFor(publish({ scope: 'products:sync' }))).toEqual(['products:sync'])
  })
})

describe('dynamic registrations from before migration 0020 (migration 0022)', () => {
  /** A registration as 0020 left one: its registered scope as both its default and its ceiling. */
  async function registeredBefore0020(scopes: string[]) {
    const { client_id: id } = await register(t, { scope: scopes.join(' ') })
    await t.database.db
      .updateTable('clients')
      .set({ scopes, default_scopes: scopes })
      .where('id', '=', id)
      .execute()
    return id
  }

  const rowOf = (id: string) =>
    t.database.db
      .selectFrom('clients')
      .select(['scopes', 'default_scopes'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()

  it('step up within the policy after it, as a registration made since does; their default stays', async () => {
    const old = await registeredBefore0020(['links:read'])
    const since = (await register(t, { scope: 'links:read' })).client_id
    const unnamed = (await register(t, {})).client_id
    const unnamedBefore = await rowOf(unnamed)
    // Before: the old row's registered scope is its ceiling; the new one steps up.
    expect(await refusal(old, { scope: 'links:read links:write' })).toBe('invalid_scope')
    expect(await consentFor(since, { scope: 'links:read links:write' })).toEqual([
      'links:read',
      'links:write',
    ])

    await m0022.up(t.database.db)

    expect(await rowOf(old)).toEqual({
      scopes: ['links:read', 'links:write', 'ecommerce:write', 'products:sync'],
      default_scopes: ['links:read'],
    })
    for (const id of [old, since]) {
      expect(await consentFor(id)).toEqual(['links:read'])
      expect(await consentFor(id, { scope: 'links:read links:write' })).toEqual(['links:read', 'links:write'])
      // The policy as it is now still bounds them.
      expect(await refusal(id, { scope: 'links:read products:sync' })).toBe('invalid_scope')
    }
    // A registration that stated no scope keeps its row (its default is the operator's).
    expect(await rowOf(unnamed)).toEqual(unnamedBefore)
  })
})
