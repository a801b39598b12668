import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

/**
 * An honest software authenticator for server-level passkey tests: it keeps ES256 key pairs and
 * builds what a browser and a platform authenticator would send (WebAuthn L3 §6.1 authenticator
 * data, §5.8.1 client data, §6.5.4 a "none" attestation object in CBOR with a COSE key, §6.3.3 an
 * assertion signature over authenticatorData ‖ SHA-256(clientDataJSON)). Every field can be bent
 * (origin, RP ID, flags, counter) to show the server refuses what a real authenticator would not send.
 */

const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const

/** Just enough CBOR (RFC 8949) for attestation objects and COSE keys: maps, text, bytes, integers. */
type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length])
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length])
  if (length < 0x10000) {
    const b = Buffer.alloc(3)
    b[0] = (major << 5) | 25
    b.writeUInt16BE(length, 1)
    return b
  }
  const b = Buffer.alloc(5)
  b[0] = (major << 5) | 26
  b.writeUInt32BE(length, 1)
  return b
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value)
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8')
    return Buffer.concat([cborHead(3, bytes.length), bytes])
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), Buffer.from(value)])
  const parts = [cborHead(5, value.size)]
  for (const [k, v] of value) parts.push(cbor(k), cbor(v))
  return Buffer.concat(parts)
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()
const b64u = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url')

export interface SoftCredential {
  id: Buffer
  privateKey: KeyObject
  publicKey: KeyObject
  userHandle: Buffer
  rpId: string
  signCount: number
  backupEligible: boolean
  backedUp: boolean
}

export interface CeremonyOptions {
  origin: string
  /** The RP ID whose hash goes into authenticator data (a phishing site's would differ). */
  rpId?: string
  /** Leave out user verification (UV), or presence (UP). */
  userVerified?: boolean
  userPresent?: boolean
  type?: string
}

function authenticatorData(
  rpId: string,
  flags: number,
  signCount: number,
  attested?: { id: Buffer; cose: Buffer },
): Buffer {
  const counter = Buffer.alloc(4)
  counter.writeUInt32BE(signCount >>> 0)
  const parts: Buffer[] = [sha256(rpId), Buffer.from([flags]), counter]
  if (attested) {
    const length = Buffer.alloc(2)
    length.writeUInt16BE(attested.id.length)
    parts.push(Buffer.alloc(16), length, attested.id, attested.cose)
  }
  return Buffer.concat(parts)
}

function coseKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' })
  return cbor(
    new Map<Cbor, Cbor>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]),
  )
}

function flagsOf(c: SoftCredential, o: CeremonyOptions, attested: boolean): number {
  let flags = 0
  if (o.userPresent !== false) flags |= FLAG.UP
  if (o.userVerified !== false) flags |= FLAG.UV
  if (c.backupEligible) flags |= FLAG.BE
  if (c.backedUp) flags |= FLAG.BS
  if (attested) flags |= FLAG.AT
  return flags
}

const clientData = (type: string, challenge: string, origin: string) =>
  Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))

export function createSoftCredential(
  rpId: string,
  userId: string,
  options: { backupEligible?: boolean; backedUp?: boolean; signCount?: number } = {},
): SoftCredential {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    id: randomBytes(32),
    privateKey,
    publicKey,
    userHandle: Buffer.from(userId.replace(/-/g, ''), 'hex'),
    rpId,
    signCount: options.signCount ?? 0,
    backupEligible: options.backupEligible ?? true,
    backedUp: options.backedUp ?? true,
  }
}

/** navigator.credentials.create's answer, as PublicKeyCredential.toJSON() gives it, in a string. */
export function registrationResponse(c: SoftCredential, challenge: string, o: CeremonyOptions): string {
  const authData = authenticatorData(o.rpId ?? c.rpId, flagsOf(c, o, true), c.signCount, {
    id: c.id,
    cose: coseKey(c.publicKey),
  })
  const attestationObject = cbor(
    new Map<Cbor, Cbor>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]),
  )
  return JSON.stringify({
    id: b64u(c.id),
    rawId: b64u(c.id),
    type: 'public-key',
    response: {
      clientDataJSON: b64u(clientData(o.type ?? 'webauthn.create', challenge, o.origin)),
      attestationObject: b64u(attestationObject),
      transports: ['internal'],
    },
    authenticatorAttachment: 'platform',
    clientExtensionResults: {},
  })
}

/** navigator.credentials.get's answer; each call counts one use (the counter grows unless `signCount`). */
export function assertionResponse(
  c: SoftCredential,
  challenge: string,
  o: CeremonyOptions & { signCount?: number; userHandle?: Buffer | null },
): string {
  if (o.signCount === undefined && c.signCount > 0) c.signCount += 1
  const authData = authenticatorData(o.rpId ?? c.rpId, flagsOf(c, o, false), o.signCount ?? c.signCount)
  const data = clientData(o.type ?? 'webauthn.get', challenge, o.origin)
  const signature = sign('sha256', Buffer.concat([authData, sha256(data)]), c.privateKey)
  const handle = o.userHandle === undefined ? c.userHandle : o.userHandle
  return JSON.stringify({
    id: b64u(c.id),
    rawId: b64u(c.id),
    type: 'public-key',
    response: {
      clientDataJSON: b64u(data),
      authenticatorData: b64u(authData),
      signature: b64u(signature),
      ...(handle ? { userHandle: b64u(handle) } : {}),
    },
    authenticatorAttachment: 'platform',
    clientExtensionResults: {},
  })
}
