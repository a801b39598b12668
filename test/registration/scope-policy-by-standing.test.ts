import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { scopePolicyFor } from '../../src/clients/scope-policy.js'
import { ALL_SCOPES } from '../../src/lib/scopes.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'

/**
 * Issue 37 part 4: the operator's scope maxima by how an application came in. A dynamic registration
 * (unverified) gets DYNAMIC_REGISTRATION_SCOPES, else CLIENT_METADATA_SCOPES; one asking for more is
 * narrowed (RFC 7591 §2: the answer's `scope` says what was registered), one asking only for more is
 * refused with invalid_client_metadata.
 */
let t: TestApp | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

const register = (app: TestApp, scope: string | undefined) =>
  app.app.inject({
    method: 'POST',
    url: '/api/oauth/register',
    payload: {
      client_name: 'Scope Test Agent',
      redirect_uris: ['http://127.0.0.1/callback'],
      ...(scope === undefined ? {} : { scope }),
    },
  })

describe('dynamic registrations under DYNAMIC_REGISTRATION_SCOPES', () => {
  it('narrows a registration asking for more, registers the maximum for one naming none, refuses one asking only for more', async () => {
    t = await buildTestApp({
      env: { ...GENEROUS_LIMITS, DYNAMIC_REGISTRATION_SCOPES: 'links:read', CLIENT_METADATA_SCOPES: '' },
    })
    const narrowed = await register(t, 'links:read links:write')
    expect(narrowed.statusCode).toBe(201)
    expect(narrowed.json().scope).toBe('links:read')
    const stored = await t.services.clients.getClient(narrowed.json().client_id)
    expect(stored.scopes).toEqual(['links:read'])
    const unnamed = await register(t, undefined)
    expect(unnamed.statusCode).toBe(201)
    expect(unnamed.json().scope).toBe('links:read')
    const refused = await register(t, 'links:write')
    expect(refused.statusCode).toBe(400)
    expect(refused.json()).toMatchObject({ error: 'invalid_client_metadata' })
  })

  it('falls back to CLIENT_METADATA_SCOPES while unset (the one setting both kinds had before)', async () => {
    t = await buildTestApp({ env: { ...GENEROUS_LIMITS, CLIENT_METADATA_SCOPES: 'links:write' } })
    const res = await register(t, 'links:read links:write')
    expect(res.statusCode).toBe(201)
    expect(res.json().scope).toBe('links:write')
  })
})

describe('scopePolicyFor', () => {
  const config = (env: Record<string, string>) => loadConfig(env)

  it('gives each kind its own maximum; empty means every scope', () => {
    const both = config({
      CLIENT_METADATA_SCOPES: 'links:read links:write',
      DYNAMIC_REGISTRATION_SCOPES: 'links:read',
    })
    expect(scopePolicyFor(both, 'metadata_document').maximum).toEqual(['links:read', 'links:write'])
    expect(scopePolicyFor(both, 'dynamic').maximum).toEqual(['links:read'])
    const none = config({})
    expect(scopePolicyFor(none, 'dynamic').maximum).toEqual(ALL_SCOPES)
    expect(scopePolicyFor(none, 'metadata_document').maximum).toEqual(ALL_SCOPES)
  })

  it('gives each kind its own default scopes, with no fall-back from one to the other', () => {
    const both = config({
      CLIENT_METADATA_SCOPES: 'links:read links:write',
      CLIENT_METADATA_DEFAULT_SCOPES: 'links:read',
      DYNAMIC_REGISTRATION_DEFAULT_SCOPES: 'links:write',
    })
    expect(scopePolicyFor(both, 'metadata_document').defaults).toEqual(['links:read'])
    expect(scopePolicyFor(both, 'dynamic').defaults).toEqual(['links:write'])
    const one = config({ CLIENT_METADATA_DEFAULT_SCOPES: 'links:read' })
    expect(scopePolicyFor(one, 'dynamic').defaults).toBeUndefined()
  })

  it('refuses at start a default scope outside its kind’s maximum, naming both variables', () => {
    expect(() =>
      config({ CLIENT_METADATA_SCOPES: 'links:read', CLIENT_METADATA_DEFAULT_SCOPES: 'links:write' }),
    ).toThrow(
      /^CLIENT_METADATA_DEFAULT_SCOPES: expected scopes within CLIENT_METADATA_SCOPES \(links:read\), got "links:write"$/,
    )
    expect(() =>
      config({
        DYNAMIC_REGISTRATION_SCOPES: 'links:read',
        DYNAMIC_REGISTRATION_DEFAULT_SCOPES: 'links:write',
      }),
    ).toThrow(/^DYNAMIC_REGISTRATION_DEFAULT_SCOPES: expected scopes within DYNAMIC_REGISTRATION_SCOPES/)
    // Unset, the dynamic maximum is CLIENT_METADATA_SCOPES: the message names the one that applies.
    expect(() =>
      config({ CLIENT_METADATA_SCOPES: 'links:read', DYNAMIC_REGISTRATION_DEFAULT_SCOPES: 'products:sync' }),
    ).toThrow(
      /^DYNAMIC_REGISTRATION_DEFAULT_SCOPES: expected scopes within CLIENT_METADATA_SCOPES \(links:read\)/,
    )
    expect(() => config({ DYNAMIC_REGISTRATION_DEFAULT_SCOPES: 'links:read admin' })).toThrow(
      /^DYNAMIC_REGISTRATION_DEFAULT_SCOPES: expected known scopes, got "admin"/,
    )
  })

  it('refuses an unknown scope in DYNAMIC_REGISTRATION_SCOPES, naming the variable', () => {
    expect(() => config({ DYNAMIC_REGISTRATION_SCOPES: 'links:read admin:everything' })).toThrow(
      /^DYNAMIC_REGISTRATION_SCOPES: expected known scopes, got "admin:everything"/,
    )
  })
})
