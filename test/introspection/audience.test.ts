import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signJwt } from '../../src/tokens/access-token.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createStream, drain } from '../helpers/events.js'
import { createParty, exchangeCode, jwtClaims, type Party } from '../helpers/fixtures.js'
import { introspect, type ResourceServerCredentials } from '../helpers/tokens.js'
import type { Scope } from '../../src/lib/scopes.js'

/**
 * RFC 7662 §4 and RFC 8707: introspection tells a resource server only about tokens meant for it.
 * A token whose aud neither is nor lists the caller's resource (RFC 9068 §4) is inactive for that
 * caller; a caller registered without a resource sees only tokens of the default audience
 * (ACCESS_TOKEN_AUDIENCE). A token asked for without `resource` lists the default audience and every
 * API serving one of its scopes, so each of those is told about it, and no other.
 * Tokens for a resource are minted by re-signing a real token with the active key and another aud
 * (the token endpoint's `resource` parameter is built elsewhere); the token stays live in the database.
 */
const LINKS = 'https://links.example/api'
const SHOP = 'https://shop.example/api'
const COMMERCE = 'https://commerce.example/api'
const INACTIVE = { active: false }

let t: TestApp
let party: Party
let links: ResourceServerCredentials
let shop: ResourceServerCredentials
let legacy: ResourceServerCredentials
let commerce: ResourceServerCredentials
let defaultToken: string

beforeAll(async () => {
  t = await buildTestApp()
  party = await createParty(t)
  const register = async (name: string, resource?: string, scopes: Scope[] = ['links:read']) => {
    const s = await t.services.resourceServers.createResourceServer(
      resource ? { name, resource, scopes } : { name },
    )
    return { id: s.id, secret: s.secret }
  }
  links = await register('Links API', LINKS)
  shop = await register('Shop API', SHOP)
  legacy = await register('Legacy API')
  commerce = await register('Commerce API', COMMERCE, ['ecommerce:write'])
  defaultToken = (await exchangeCode(t, party)).access_token
})
afterAll(async () => {
  await t.close()
})

/** The live token re-signed with our active key and another aud (a string, or a list). */
const withAudience = (aud: string | string[]) =>
  signJwt({ typ: 'at+jwt' }, { ...jwtClaims(defaultToken), aud }, t.services.signingKeys.activeSigningKey())

describe('introspection answers only the resource server a token is for', () => {
  it('the control: a token asked for without resource lists the default audience and the serving APIs', () => {
    // The party holds links:read and links:write: links and shop serve links:read, commerce neither.
    expect(jwtClaims(defaultToken).aud).toEqual([t.config.accessTokenAudience, LINKS, SHOP])
  })

  it('a token for A is active for A, with aud A', async () => {
    const body = await introspect(t, links, withAudience(LINKS))
    expect(body).toMatchObject({ active: true, aud: LINKS, sub: party.userId })
  })

  it('a token for A is inactive for B (replay across APIs)', async () => {
    expect(await introspect(t, shop, withAudience(LINKS))).toEqual(INACTIVE)
    expect(await introspect(t, links, withAudience(SHOP))).toEqual(INACTIVE)
  })

  it('a token asked for without resource: active for each API it lists, inactive for one serving none of its scopes', async () => {
    expect((await introspect(t, legacy, defaultToken)).active).toBe(true)
    expect(await introspect(t, links, defaultToken)).toMatchObject({
      active: true,
      scope: 'links:read links:write',
    })
    expect((await introspect(t, shop, defaultToken)).active).toBe(true)
    expect(await introspect(t, commerce, defaultToken)).toEqual(INACTIVE)
  })

  it('the default audience alone: active only for a resource server without resource', async () => {
    const onlyDefault = withAudience(t.config.accessTokenAudience)
    expect((await introspect(t, legacy, onlyDefault)).active).toBe(true)
    expect(await introspect(t, links, onlyDefault)).toEqual(INACTIVE)
  })

  it('a token for a resource: inactive for a resource server without resource', async () => {
    expect(await introspect(t, legacy, withAudience(LINKS))).toEqual(INACTIVE)
  })

  it('compares exact strings: no normalisation of case or trailing slash', async () => {
    expect(await introspect(t, links, withAudience(`${LINKS}/`))).toEqual(INACTIVE)
    expect(await introspect(t, links, withAudience(LINKS.toUpperCase()))).toEqual(INACTIVE)
  })

  it('a list of audiences is honoured for each API it names, never for one it does not', async () => {
    expect((await introspect(t, links, withAudience([LINKS, SHOP]))).active).toBe(true)
    expect((await introspect(t, shop, withAudience([LINKS, SHOP]))).active).toBe(true)
    expect((await introspect(t, links, withAudience([LINKS]))).active).toBe(true)
    expect(await introspect(t, commerce, withAudience([LINKS, SHOP]))).toEqual(INACTIVE)
    expect(await introspect(t, legacy, withAudience([LINKS, SHOP]))).toEqual(INACTIVE)
  })

  it('a refused audience tells nothing else: the answer is {active: false} only', async () => {
    const body = await introspect(t, shop, withAudience(LINKS))
    expect(Object.keys(body)).toEqual(['active'])
  })
})

describe('the revocation event feed is not filtered by audience', () => {
  it('a stream of resource server B still hears of the revocation of a token for A', async () => {
    const stream = await createStream(t, shop)
    await drain(t, shop, stream)
    const other = await createParty(t)
    const forLinks = signJwt(
      { typ: 'at+jwt' },
      { ...jwtClaims((await exchangeCode(t, other)).access_token), aud: LINKS },
      t.services.signingKeys.activeSigningKey(),
    )
    expect((await introspect(t, links, forLinks)).active).toBe(true)
    await t.services.connectedApps.revoke(other.userId, other.client.id)
    expect(await introspect(t, links, forLinks)).toEqual(INACTIVE)
    const heard = await drain(t, shop, stream)
    expect(heard.map((set) => set.event.grant_id)).toContain(jwtClaims(forLinks).grant_id)
  })
})
