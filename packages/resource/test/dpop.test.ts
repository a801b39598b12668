import fc from 'fast-check'
import { base64url, calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose'
import { createHash, generateKeyPairSync, sign } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  accessTokenHash,
  createMemoryReplayStore,
  DpopReplayStoreFullError,
  DPOP_ASYMMETRIC_ALGORITHMS,
  type DpopProofCheck,
  DpopProofError,
  jwkThumbprint,
  normalizeHtu,
  verifyDpopProof,
} from '@linkauth/resource/dpop'

const NOW = 1_800_000_000
const URL_ = 'https://auth.example.com/api/oauth/token'
const encoder = new TextEncoder()

type Signer = { privateKey: CryptoKey; jwk: JWK; alg: string }
let es256: Signer
let ed25519: Signer
let other: Signer

async function signer(alg: 'ES256' | 'EdDSA'): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { privateKey, jwk: await exportJWK(publicKey), alg }
}

beforeAll(async () => {
  es256 = await signer('ES256')
  ed25519 = await signer('EdDSA')
  other = await signer('ES256')
})

interface ProofParts {
  header?: Record<string, unknown>
  claims?: Record<string, unknown>
  key?: Signer
}

/** A proof as a client makes one, with any header or claim replaced (undefined removes it). */
async function proof({ header = {}, claims = {}, key = es256 }: ProofParts = {}): Promise<string> {
  const h: Record<string, unknown> = { typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk, ...header }
  const c: Record<string, unknown> = {
    jti: crypto.randomUUID(),
    htm: 'POST',
    htu: URL_,
    iat: NOW,
    ...claims,
  }
  for (const o of [h, c]) for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
  return new CompactSign(encoder.encode(JSON.stringify(c)))
    .setProtectedHeader(h as { alg: string })
    .sign(key.privateKey)
}

const check = (extra: Partial<DpopProofCheck> = {}): DpopProofCheck => ({
  method: 'POST',
  url: URL_,
  now: NOW,
  replayStore: createMemoryReplayStore({ now: () => NOW }),
  ...extra,
})

async function refusal(value: unknown, extra: Partial<DpopProofCheck> = {}): Promise<DpopProofError> {
  const err = await verifyDpopProof(value, check(extra)).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(DpopProofError)
  return err as DpopProofError
}

const claimsNow = () => ({ jti: crypto.randomUUID(), htm: 'POST', htu: URL_, iat: NOW })

/** A proof signed outside jose, for what jose would refuse to sign. */
function nodeSigned(header: object, claims: object, signWith: (input: Buffer) => Buffer): string {
  const input = `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(claims))}`
  return `${input}.${signWith(Buffer.from(input)).toString('base64url')}`
}

const unsigned = (header: object, claims: object, signature = '') =>
  `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(claims))}.${signature}`

describe('verifyDpopProof accepts', () => {
  it('an ES256 proof and answers the RFC 7638 thumbprint of its key', async () => {
    const result = await verifyDpopProof(await proof(), check())
    expect(result.jkt).toBe(await calculateJwkThumbprint(es256.jwk, 'sha256'))
    expect(result.iat).toBe(NOW)
  })

  it('an EdDSA proof', async () => {
    const result = await verifyDpopProof(await proof({ key: ed25519 }), check())
    expect(result.jkt).toBe(await calculateJwkThumbprint(ed25519.jwk, 'sha256'))
  })

  it('every asymmetric algorithm, signed by jose, with the thumbprint jose computes', async () => {
    for (const alg of DPOP_ASYMMETRIC_ALGORITHMS) {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
      const key = { privateKey, jwk: await exportJWK(publicKey), alg }
      const result = await verifyDpopProof(await proof({ key }), check({ algorithms: [alg] }))
      expect(result.jkt, alg).toBe(await calculateJwkThumbprint(key.jwk, 'sha256'))
      // A second proof of the same key (its parsed key is reused) verifies the same way.
      expect((await verifyDpopProof(await proof({ key }), check({ algorithms: [alg] }))).jkt).toBe(result.jkt)
    }
  })

  it('htu with userinfo is refused (wrong_url), even an empty one, and normalizeHtu names no URL for it', async () => {
    for (const htu of [
      'https://user@auth.example.com/api/oauth/token',
      'https://user:pass@auth.example.com/api/oauth/token',
      'https://@auth.example.com/api/oauth/token',
      'https:\\\\user@auth.example.com/api/oauth/token',
    ]) {
      expect(normalizeHtu(htu), htu).toBeUndefined()
      expect((await refusal(await proof({ claims: { htu } }))).code, htu).toBe('wrong_url')
    }
    expect(normalizeHtu(new URL('https://user@auth.example.com/x'))).toBeUndefined()
  })

  it('htu with another query, fragment, case of scheme and host, and an explicit default port', async () => {
    const htu = 'HTTPS://Auth.Example.COM:443/api/oauth/%74oken?x=1#frag'
    await expect(verifyDpopProof(await proof({ claims: { htu } }), check())).resolves.toBeDefined()
    await expect(verifyDpopProof(await proof(), check({ url: `${URL_}?grant=1` }))).resolves.toBeDefined()
  })

  it('the access token hash in ath when a token comes along', async () => {
    const token = 'eyJ.an.access-token'
    const ath = createHash('sha256').update(token).digest('base64url')
    expect(accessTokenHash(token)).toBe(ath)
    await expect(
      verifyDpopProof(await proof({ claims: { ath } }), check({ accessToken: token })),
    ).resolves.toBeDefined()
  })

  it('a nonce the caller accepts', async () => {
    const result = await verifyDpopProof(
      await proof({ claims: { nonce: 'n-1' } }),
      check({ nonce: (n) => n === 'n-1' }),
    )
    expect(result.nonce).toBe('n-1')
  })

  it('iat inside the window at both ends', async () => {
    await expect(verifyDpopProof(await proof({ claims: { iat: NOW - 70 } }), check())).resolves.toBeDefined()
    await expect(verifyDpopProof(await proof({ claims: { iat: NOW + 10 } }), check())).resolves.toBeDefined()
  })
})

describe('verifyDpopProof refuses', () => {
  it('no proof, several proofs, a list of headers', async () => {
    expect((await refusal(undefined)).code).toBe('missing_proof')
    expect((await refusal('')).code).toBe('missing_proof')
    const one = await proof()
    expect((await refusal(`${one}, ${one}`)).code).toBe('multiple_proofs')
    expect((await refusal([one, one])).code).toBe('multiple_proofs')
  })

  it('anything that is not a compact JWS, and non-JSON parts', async () => {
    for (const bad of ['abc', 'a.b', 'a.b.c.d', 'ü.a.b', 42, {}, 'e30.e30.'])
      expect((await refusal(bad)).error).toBe('invalid_dpop_proof')
    expect((await refusal('bm90IGpzb24.e30.c2ln')).code).toBe('malformed_proof')
  })

  it('a huge proof and a huge header before parsing them', async () => {
    expect((await refusal('a'.repeat(5000) + '.b.c')).description).toMatch(/too long/)
    const padded = await proof({ header: { pad: 'x'.repeat(2000) } })
    expect((await refusal(padded)).description).toMatch(/header is too long/)
  })

  it('wrong typ, missing typ', async () => {
    expect((await refusal(await proof({ header: { typ: 'JWT' } }))).code).toBe('wrong_type')
    expect((await refusal(await proof({ header: { typ: 'at+jwt' } }))).code).toBe('wrong_type')
    expect((await refusal(await proof({ header: { typ: undefined } }))).code).toBe('wrong_type')
  })

  it('alg none', async () => {
    const none = unsigned(
      { typ: 'dpop+jwt', alg: 'none', jwk: es256.jwk },
      { jti: 'j', htm: 'POST', htu: URL_, iat: NOW },
    )
    expect((await refusal(none)).code).toBe('malformed_proof') // no signature segment at all
    expect((await refusal(`${none}AAAA`)).code).toBe('unsupported_alg')
  })

  it('HS256 with a symmetric key in jwk', async () => {
    const secret = crypto.getRandomValues(new Uint8Array(32))
    const hs = await new CompactSign(
      encoder.encode(JSON.stringify({ jti: 'j', htm: 'POST', htu: URL_, iat: NOW })),
    )
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'HS256', jwk: { kty: 'oct', k: base64url.encode(secret) } })
      .sign(secret)
    expect((await refusal(hs)).code).toBe('unsupported_alg')
    // Even with HS256 allowed by a careless caller, the option is refused before any proof is read.
    await expect(verifyDpopProof(hs, check({ algorithms: ['HS256' as 'ES256'] }))).rejects.toBeInstanceOf(
      TypeError,
    )
  })

  it('an alg the caller did not allow', async () => {
    expect((await refusal(await proof({ key: ed25519 }), { algorithms: ['ES256'] })).code).toBe(
      'unsupported_alg',
    )
  })

  it('a private key in jwk', async () => {
    const withPrivate = { ...(await exportJWK(es256.privateKey)) }
    expect(withPrivate.d).toBeDefined()
    expect((await refusal(await proof({ header: { jwk: withPrivate } }))).code).toBe('private_key')
    for (const member of ['p', 'q', 'dp', 'dq', 'qi', 'k'])
      expect((await refusal(await proof({ header: { jwk: { ...es256.jwk, [member]: 'AQAB' } } }))).code).toBe(
        'private_key',
      )
  })

  it('no jwk, a jwk of an unknown type, a key of another algorithm, a key that did not sign', async () => {
    expect((await refusal(await proof({ header: { jwk: undefined } }))).code).toBe('invalid_key')
    expect((await refusal(await proof({ header: { jwk: { kty: 'oct' } } }))).code).toBe('invalid_key')
    expect((await refusal(await proof({ header: { jwk: ed25519.jwk } }))).code).toBe('invalid_key')
    expect((await refusal(await proof({ header: { jwk: other.jwk } }))).code).toBe('bad_signature')
  })

  it('a key of the right type for another algorithm of its family', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' })
    const p384 = nodeSigned(
      { typ: 'dpop+jwt', alg: 'ES256', jwk: publicKey.export({ format: 'jwk' }) },
      claimsNow(),
      (input) => sign('sha256', input, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    )
    expect((await refusal(p384)).code).toBe('invalid_key')
    // RSA-PSS signature presented as PKCS #1 v1.5: the same key, the wrong scheme.
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const pss = nodeSigned(
      { typ: 'dpop+jwt', alg: 'RS256', jwk: rsa.publicKey.export({ format: 'jwk' }) },
      claimsNow(),
      (input) => sign('sha256', input, { key: rsa.privateKey, padding: 6, saltLength: 32 }),
    )
    expect((await refusal(pss, { algorithms: ['RS256'] })).code).toBe('bad_signature')
  })

  it('an RSA key shorter than 2048 bits, even with RS256 allowed', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    const jwk = publicKey.export({ format: 'jwk' })
    const small = nodeSigned({ typ: 'dpop+jwt', alg: 'RS256', jwk }, claimsNow(), (input) =>
      sign('sha256', input, privateKey),
    )
    expect((await refusal(small, { algorithms: ['RS256'] })).code).toBe('invalid_key')
  })

  it('a tampered payload', async () => {
    const [h, , s] = (await proof()).split('.')
    const forged = `${h}.${base64url.encode(JSON.stringify({ jti: 'x', htm: 'POST', htu: URL_, iat: NOW }))}.${s}`
    expect((await refusal(forged)).code).toBe('bad_signature')
  })

  it('critical headers', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = publicKey.export({ format: 'jwk' })
    const critical = nodeSigned(
      { typ: 'dpop+jwt', alg: 'ES256', jwk, crit: ['exp'], exp: 1 },
      claimsNow(),
      (input) => sign('sha256', input, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    )
    const plain = nodeSigned({ typ: 'dpop+jwt', alg: 'ES256', jwk }, claimsNow(), (input) =>
      sign('sha256', input, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    )
    await expect(verifyDpopProof(plain, check())).resolves.toBeDefined()
    expect((await refusal(critical)).code).toBe('malformed_proof')
  })

  it('missing or mistyped claims', async () => {
    for (const claims of [
      { jti: undefined },
      { jti: '' },
      { jti: 'x'.repeat(300) },
      { htm: undefined },
      { htu: undefined },
      { htu: 7 },
      { iat: undefined },
      { iat: '1800000000' },
      { nonce: 5 },
    ])
      expect((await refusal(await proof({ claims }))).code).toBe('invalid_claims')
  })

  it('a proof made for another method or URL', async () => {
    expect((await refusal(await proof({ claims: { htm: 'GET' } }))).code).toBe('wrong_method')
    expect((await refusal(await proof({ claims: { htm: 'post' } }))).code).toBe('wrong_method')
    for (const htu of [
      'https://auth.example.com/api/oauth/revoke',
      'http://auth.example.com/api/oauth/token',
      'https://auth.example.com:8443/api/oauth/token',
      'https://evil.example.com/api/oauth/token',
      'https://auth.example.com/api/oauth/token/',
      'not a url',
      'javascript:alert(1)',
    ])
      expect((await refusal(await proof({ claims: { htu } }))).code).toBe('wrong_url')
  })

  it('an old proof and one from the future', async () => {
    expect((await refusal(await proof({ claims: { iat: NOW - 71 } }))).code).toBe('proof_too_old')
    expect((await refusal(await proof({ claims: { iat: NOW + 11 } }))).code).toBe('proof_from_future')
    expect(
      (await refusal(await proof({ claims: { iat: NOW - 5 } }), { maxAgeSeconds: 1, clockSkewSeconds: 0 }))
        .code,
    ).toBe('proof_too_old')
  })

  it('a replayed jti, until it expires, per key', async () => {
    let now = NOW
    const replayStore = createMemoryReplayStore({ now: () => now })
    const once = await proof({ claims: { jti: 'same' } })
    await verifyDpopProof(once, check({ replayStore }))
    expect((await refusal(once, { replayStore })).code).toBe('replayed_proof')
    // Another key may use the same jti.
    await expect(
      verifyDpopProof(await proof({ key: other, claims: { jti: 'same' } }), check({ replayStore })),
    ).resolves.toBeDefined()
    // Past the window the proof is refused for its age, and the store may forget it.
    now = NOW + 200
    expect(await replayStore.remember('k', now + 10)).toBe(true)
  })

  it('concurrent uses of one proof: exactly one wins', async () => {
    const replayStore = createMemoryReplayStore({ now: () => NOW })
    const one = await proof()
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => verifyDpopProof(one, check({ replayStore }))),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
  })

  it('a refused proof does not use up its jti', async () => {
    const replayStore = createMemoryReplayStore({ now: () => NOW })
    const p = await proof({ claims: { jti: 'keep' } })
    await refusal(p, { replayStore, method: 'GET' })
    await expect(verifyDpopProof(p, check({ replayStore }))).resolves.toBeDefined()
  })

  it('a missing or mismatched ath when an access token comes along', async () => {
    expect((await refusal(await proof(), { accessToken: 'tok' })).code).toBe('wrong_ath')
    expect(
      (await refusal(await proof({ claims: { ath: accessTokenHash('other') } }), { accessToken: 'tok' }))
        .code,
    ).toBe('wrong_ath')
  })

  it('a missing or stale nonce with use_dpop_nonce', async () => {
    const missing = await refusal(await proof(), { nonce: () => true })
    expect(missing.error).toBe('use_dpop_nonce')
    expect(missing.toJSON()).toEqual({ error: 'use_dpop_nonce', error_description: missing.description })
    expect(
      (await refusal(await proof({ claims: { nonce: 'old' } }), { nonce: (n) => n === 'new' })).error,
    ).toBe('use_dpop_nonce')
  })

  it('never echoes the proof, key or token in its description', async () => {
    const p = await proof({ claims: { htm: 'GET' } })
    const err = await refusal(p, { accessToken: 'secret-token' })
    expect(err.description).not.toContain(p.slice(0, 20))
    expect(err.message).not.toContain('secret-token')
  })
})

describe('jwkThumbprint', () => {
  it('is RFC 7638 for EC, OKP and RSA keys whatever other members they carry, and undefined without a required one', async () => {
    const rsa = await exportJWK((await generateKeyPair('PS256', { extractable: true })).publicKey)
    for (const jwk of [es256.jwk, ed25519.jwk, rsa]) {
      const expected = await calculateJwkThumbprint(jwk, 'sha256')
      expect(jwkThumbprint(jwk)).toBe(expected)
      expect(jwkThumbprint({ use: 'sig', alg: 'ES256', kid: 'k1', ...jwk })).toBe(expected)
    }
    expect(jwkThumbprint({ ...es256.jwk, y: undefined })).toBeUndefined()
    expect(jwkThumbprint({ ...rsa, e: 65537 as unknown as string })).toBeUndefined()
    expect(jwkThumbprint({ kty: 'oct', k: 'abc' })).toBeUndefined()
  })
})

describe('normalizeHtu', () => {
  it('compares as RFC 3986 §6 says', () => {
    expect(normalizeHtu('HTTP://EXAMPLE.com:80')).toBe('http://example.com/')
    expect(normalizeHtu('https://example.com/a/../b/%7euser/%2f?q#f')).toBe('https://example.com/b/~user/%2F')
    expect(normalizeHtu('ftp://example.com/')).toBeUndefined()
    expect(normalizeHtu('/relative')).toBeUndefined()
  })
})

describe('the memory replay store', () => {
  it('stays within its bound, makes room from expired entries, never forgets an unexpired one', async () => {
    let now = 100
    const store = createMemoryReplayStore({ maxEntries: 3, now: () => now })
    expect(await store.remember('old', 150)).toBe(true)
    for (const k of ['a', 'b']) expect(await store.remember(k, 200)).toBe(true)
    // Full of unexpired jtis: a new one is refused, and every one held is still a replay.
    await expect(store.remember('c', 200)).rejects.toBeInstanceOf(DpopReplayStoreFullError)
    for (const k of ['old', 'a', 'b']) expect(await store.remember(k, 200)).toBe(false)
    now = 150 // 'old' has expired: its room goes to the next one
    expect(await store.remember('c', 200)).toBe(true)
    for (const k of ['a', 'b', 'c']) expect(await store.remember(k, 200)).toBe(false)
    now = 200
    for (const k of ['d', 'e', 'f']) expect(await store.remember(k, 260)).toBe(true)
  })

  it('a flood of fresh proofs past the bound: refused with replay_store_full, and no earlier proof replays', async () => {
    const max = 500
    let now = NOW
    const replayStore = createMemoryReplayStore({ maxEntries: max, now: () => now })
    const accepted: string[] = []
    for (let i = 0; i < max; i++) {
      const p = await proof()
      await verifyDpopProof(p, check({ replayStore }))
      accepted.push(p)
    }
    // The flood goes on: every further fresh proof is refused, none pushes an old jti out.
    for (let i = 0; i < 50; i++)
      expect((await refusal(await proof(), { replayStore })).code).toBe('replay_store_full')
    for (const p of [accepted[0]!, accepted[1]!, accepted[max - 1]!])
      expect((await refusal(p, { replayStore })).code).toBe('replayed_proof')
    // Once the first proofs have expired (60 s + 10 s skew), fresh ones are accepted again.
    now = NOW + 72
    const fresh = await proof({ claims: { iat: now } })
    await expect(verifyDpopProof(fresh, check({ replayStore, now }))).resolves.toBeDefined()
    expect((await refusal(fresh, { replayStore, now })).code).toBe('replayed_proof')
  })
})

describe('mutated proofs', () => {
  it('never throw anything but DpopProofError', async () => {
    const base = await proof()
    const replayStore = createMemoryReplayStore({ now: () => NOW })
    const alphabet = 'ABCabc012-_.,= {}"eyJ'
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            at: fc.nat({ max: base.length }),
            cut: fc.nat({ max: 5 }),
            insert: fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 8 }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        async (edits) => {
          let mutated = base
          for (const { at, cut, insert } of edits)
            mutated = mutated.slice(0, at) + insert + mutated.slice(at + cut)
          if (mutated === base) return
          const outcome = await verifyDpopProof(mutated, check({ replayStore })).then(
            () => 'accepted',
            (e: unknown) => e,
          )
          // A mutation that leaves the signed bytes intact (say, base64url padding bits) may still verify.
          if (outcome !== 'accepted') expect(outcome).toBeInstanceOf(DpopProofError)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('arbitrary JSON in the header and payload never throws anything but DpopProofError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.jsonValue(), async (header, claims) => {
        const value = unsigned(header as object, claims as object, 'c2ln')
        const err = await verifyDpopProof(value, check()).catch((e: unknown) => e)
        expect(err).toBeInstanceOf(DpopProofError)
      }),
      { numRuns: 200 },
    )
  })

  it('signed proofs with arbitrary headers and claims never throw anything but DpopProofError', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom('typ', 'alg', 'jwk', 'crit', 'kid'), fc.jsonValue()),
        fc.dictionary(fc.constantFrom('jti', 'htm', 'htu', 'iat', 'ath', 'nonce'), fc.jsonValue()),
        async (header, claims) => {
          const signed = await proof({ header, claims }).catch(() => undefined)
          if (signed === undefined) return // jose would not sign it (say, an alg it does not know)
          const outcome = await verifyDpopProof(signed, check()).catch((e: unknown) => e)
          if (!(outcome instanceof DpopProofError)) expect(outcome).toHaveProperty('jkt')
        },
      ),
      { numRuns: 150 },
    )
  })
})
