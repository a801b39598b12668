/**
 * Access-token signing speed: jose (WebCrypto) versus node:crypto, per algorithm.
 * Run: npx tsx bench/sign.ts
 */
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto'
import { SignJWT } from 'jose'

const claims = () => ({
  iss: 'http://localhost:3000',
  sub: randomUUID(),
  aud: 'http://localhost:3000/api',
  iat: Math.floor(Date.now() / 1000),
  exp: Math.floor(Date.now() / 1000) + 600,
  jti: randomUUID(),
  client_id: 'abcdefghijklmnopqrstuv',
  scope: 'links:read links:write',
  grant_id: randomUUID(),
  family_id: randomUUID(),
})

const keys = {
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  EdDSA: generateKeyPairSync('ed25519').privateKey,
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
}

function nodeSign(alg: keyof typeof keys): string {
  const header = Buffer.from(JSON.stringify({ alg, kid: 'k', typ: 'at+jwt' })).toString('base64url')
  const payload = Buffer.from(JSON.stringify(claims())).toString('base64url')
  const input = `${header}.${payload}`
  const digest = alg === 'EdDSA' ? null : 'sha256'
  const signature = sign(digest, Buffer.from(input), { key: keys[alg], dsaEncoding: 'ieee-p1363' })
  return `${input}.${signature.toString('base64url')}`
}

async function joseSign(alg: keyof typeof keys): Promise<string> {
  return new SignJWT(claims()).setProtectedHeader({ alg, kid: 'k', typ: 'at+jwt' }).sign(keys[alg])
}

async function measure(name: string, fn: () => unknown, ms = 1000) {
  const end = performance.now() + ms
  let n = 0
  while (performance.now() < end) {
    await fn()
    n++
  }
  console.log(`${name.padEnd(20)} ${Math.round((n * 1000) / ms)} signs/s`)
}

for (const alg of Object.keys(keys) as (keyof typeof keys)[]) {
  await measure(`jose ${alg}`, () => joseSign(alg))
  await measure(`node:crypto ${alg}`, () => nodeSign(alg))
}
