import fc from 'fast-check'
import { base64url, exportJWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { dpopKey, type DpopKey, dpopProof } from '../helpers/dpop.js'
import { createParty, mintCode, type Party } from '../helpers/fixtures.js'

/**
 * Hostile DPoP proofs at the token endpoint: a valid proof with any combination of its header and
 * claims replaced by what a broken client or an attacker sends. The model: the request gets tokens
 * only when nothing was replaced; otherwise a 400 invalid_dpop_proof, never a 500, and the code is
 * not touched (the same code then works with a good proof).
 */
let t: TestApp
let party: Party
let key: DpopKey
let other: DpopKey
let privateJwk: Record<string, unknown>
beforeAll(async () => {
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  party = await createParty(t)
  key = await dpopKey()
  other = await dpopKey()
  privateJwk = (await exportJWK(key.privateKey)) as Record<string, unknown>
})
afterAll(async () => t.close())

const nowSeconds = () => Math.floor(t.clock.now().getTime() / 1000)

/** Each member: kept (undefined), or one of the hostile values. `drop` removes it. */
const DROP = Symbol('drop')
type Hostile = unknown
const headerChanges: Record<string, () => Hostile[]> = {
  typ: () => [DROP, 'JWT', 'at+jwt', 'dpop', 42, null],
  alg: () => [DROP, 'none', 'HS256', 'RS256', 'ES384', '', ['ES256']],
  jwk: () => [DROP, privateJwk, other.jwk, { kty: 'oct', k: 'AAAA' }, { kty: 'EC' }, 'jwk', []],
  crit: () => [['exp']],
  pad: () => ['x'.repeat(3000)],
}
const claimChanges: Record<string, () => Hostile[]> = {
  jti: () => [DROP, '', 7, 'j'.repeat(300)],
  htm: () => [DROP, 'GET', 'post', ''],
  htu: () => [
    DROP,
    'https://evil.example/api/oauth/token',
    `${t.config.issuer}/api/oauth/revoke`,
    'not a url',
    1,
  ],
  iat: () => [DROP, nowSeconds() - 3600, nowSeconds() + 3600, String(nowSeconds()), null],
  nonce: () => [3, ''],
}

const changesOf = (table: Record<string, () => Hostile[]>) =>
  fc.record(
    Object.fromEntries(
      Object.entries(table).map(([name, values]) => [
        name,
        fc.option(fc.nat({ max: values().length - 1 }), { nil: undefined }),
      ]),
    ),
  )

function apply(table: Record<string, () => Hostile[]>, picks: Record<string, number | undefined>) {
  const out: Record<string, unknown> = {}
  for (const [name, index] of Object.entries(picks)) {
    if (index === undefined) continue
    const value = table[name]!()[index]
    out[name] = value === DROP ? undefined : value
  }
  return out
}

/** A proof built from the changes; jose refuses to sign some (then we assemble it by hand, unsigned). */
async function build(header: Record<string, unknown>, claims: Record<string, unknown>): Promise<string> {
  try {
    return await dpopProof(key, { issuer: t.config.issuer, now: t.clock.now(), header, claims })
  } catch {
    const h = { typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk, ...header }
    return `${base64url.encode(JSON.stringify(h))}.${base64url.encode(JSON.stringify(claims))}.AAAA`
  }
}

describe('hostile DPoP proofs at the token endpoint', () => {
  it('are refused with invalid_dpop_proof, never a 500, and leave the code usable', async () => {
    await fc.assert(
      fc.asyncProperty(changesOf(headerChanges), changesOf(claimChanges), async (hp, cp) => {
        const header = apply(headerChanges, hp)
        const claims = apply(claimChanges, cp)
        const changed = Object.keys(header).length + Object.keys(claims).length > 0
        const code = await mintCode(t, party)
        const send = async (proof: string) =>
          t.app.inject({
            method: 'POST',
            url: '/api/oauth/token',
            headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
            payload: new URLSearchParams({
              grant_type: 'authorization_code',
              code: code.code,
              code_verifier: code.verifier,
              client_id: party.client.id,
            }).toString(),
          })
        const res = await send(await build(header, claims))
        if (!changed) {
          expect(res.statusCode).toBe(200)
          return
        }
        expect(res.statusCode, res.body).toBe(400)
        expect(res.json().error).toBe('invalid_dpop_proof')
        expect((await send(await build({}, {}))).statusCode).toBe(200)
      }),
      { numRuns: 60 },
    )
  })
})
