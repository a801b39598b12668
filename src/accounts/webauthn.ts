import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server'
import { z } from 'zod'
import type { Config } from '../config.js'

/**
 * The WebAuthn ceremonies, on @simplewebauthn/server: it decodes CBOR and COSE, checks attestation
 * formats and signatures; this module says which rules apply (WebAuthn L3 §7.1, §7.2) and turns
 * every refusal into one error with a reason for the audit trail and the metrics.
 */

/**
 * @simplewebauthn/server is loaded at the first ceremony, not at start: with its ASN.1 and X.509
 * dependencies it is the slowest import of the server (about a third of the dependencies' import
 * time), paid by every start and every test file while most never see a passkey.
 */
const simpleWebAuthn = () => import('@simplewebauthn/server')

/** How long a challenge is accepted, and how long the browser is told to wait for the person. */
export const CHALLENGE_TTL_SECONDS = 300
const CEREMONY_TIMEOUT_MS = 120_000

/** The signature algorithms offered: ES256, EdDSA, RS256 (COSE -7, -8, -257), as L3 §5.4 suggests. */
const ALGORITHMS = [-7, -8, -257]

export type PasskeyRefusalReason =
  | 'malformed'
  | 'unknown_challenge'
  | 'unknown_passkey'
  | 'wrong_user'
  | 'verification_failed'
  | 'backup_eligibility_changed'
  | 'already_registered'
  | 'disabled'

/**
 * A ceremony the server refuses; `reason` goes to the audit trail and metrics, never to the page.
 * `unknownCredentialId` (base64url) names a credential this server does not hold at all: the page
 * hands it back to the browser that offered it, so that its password manager can forget it (WebAuthn
 * L3 §5.1.10, signalUnknownCredential). It tells that browser nothing it did not send.
 */
export class PasskeyRefusal extends Error {
  override name = 'PasskeyRefusal'
  constructor(
    readonly reason: PasskeyRefusalReason,
    readonly unknownCredentialId?: string,
  ) {
    super(`passkey refused: ${reason}`)
  }
}

export interface RelyingParty {
  id: string
  name: string
  /** The origins a ceremony may come from: the issuer's. */
  origins: string[]
}

/** The name authenticators show beside a passkey is the pages' (BRAND_NAME). */
export function relyingParty(config: Pick<Config, 'issuer' | 'passkeyRpId' | 'brand'>): RelyingParty {
  return { id: config.passkeyRpId, name: config.brand.name, origins: [new URL(config.issuer).origin] }
}

const base64url = z.string().regex(/^[A-Za-z0-9_-]*$/)
const bounded = (max: number) => base64url.max(max)
const transports = z.array(z.string().max(32)).max(10).optional()

/** What a browser posts back: PublicKeyCredential.toJSON() (L3 §5.1), sizes bounded. */
const authenticationResponseSchema = z.object({
  id: bounded(1366).min(16),
  rawId: bounded(1366).min(16),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: bounded(4096),
    authenticatorData: bounded(4096),
    signature: bounded(2048),
    userHandle: bounded(128).optional().nullable(),
  }),
  authenticatorAttachment: z.string().max(32).optional().nullable(),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
})

const registrationResponseSchema = z.object({
  id: bounded(1366).min(16),
  rawId: bounded(1366).min(16),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: bounded(4096),
    attestationObject: bounded(16_384),
    transports,
  }),
  authenticatorAttachment: z.string().max(32).optional().nullable(),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
})

function parseJson<T>(schema: z.ZodType<T>, text: string | undefined): T {
  if (!text || text.length > 40_000) throw new PasskeyRefusal('malformed')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new PasskeyRefusal('malformed')
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new PasskeyRefusal('malformed')
  return parsed.data
}

export const parseAuthenticationResponse = (text: string | undefined) =>
  parseJson(authenticationResponseSchema, text) as AuthenticationResponseJSON

export const parseRegistrationResponse = (text: string | undefined) =>
  parseJson(registrationResponseSchema, text) as RegistrationResponseJSON

/** The challenge a response signed, read from its clientDataJSON (undefined when unreadable). */
export function challengeOf(response: { response: { clientDataJSON: string } }): string | undefined {
  try {
    const clientData: unknown = JSON.parse(
      Buffer.from(response.response.clientDataJSON, 'base64url').toString(),
    )
    const challenge = (clientData as { challenge?: unknown }).challenge
    return typeof challenge === 'string' && /^[A-Za-z0-9_-]{43}$/.test(challenge) ? challenge : undefined
  } catch {
    return undefined
  }
}

/** The WebAuthn user handle of a user: the bytes of their id, which names nobody (L3 §14.6.1). */
export const userHandleOf = (userId: string) => Buffer.from(userId.replace(/-/g, ''), 'hex')

export function userIdOfHandle(handle: string): string | undefined {
  const hex = Buffer.from(handle, 'base64url').toString('hex')
  return hex.length === 32
    ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
    : undefined
}

/**
 * Options for navigator.credentials.create: a discoverable credential (a passkey), user
 * verification required, no attestation (L3 §5.4; FIDO passkey guidance), the user's passkeys
 * excluded so one authenticator is not registered twice.
 */
export async function registrationOptions(
  rp: RelyingParty,
  user: { id: string; email: string },
  challenge: string,
  existing: readonly { credentialId: string; transports: string[] }[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { generateRegistrationOptions } = await simpleWebAuthn()
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.email,
    userID: new Uint8Array(userHandleOf(user.id)),
    challenge: new Uint8Array(Buffer.from(challenge, 'base64url')),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({
      id: c.credentialId,
      transports: c.transports as AuthenticatorTransportFuture[],
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
  })
}

type AuthenticatorTransportFuture = NonNullable<RegistrationResponseJSON['response']['transports']>[number]

/** Options for navigator.credentials.get: any passkey of this RP (discoverable), or the listed ones. */
export async function authenticationOptions(
  rp: RelyingParty,
  challenge: string,
  allow: readonly { credentialId: string; transports: string[] }[] = [],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await simpleWebAuthn()
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge: new Uint8Array(Buffer.from(challenge, 'base64url')),
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: allow.map((c) => ({ id: c.credentialId, transports: c.transports })),
  })
}

export interface NewPasskey {
  credentialId: string
  publicKey: Uint8Array
  signCount: number
  transports: string[]
  backupEligible: boolean
  backedUp: boolean
}

/**
 * L3 §7.1: type, challenge (`spend` accepts it once), origin, RP ID hash, user presence and
 * verification, an offered algorithm, attestation format syntax; attestation itself is not required.
 */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  spend: (challenge: string) => Promise<boolean>,
): Promise<NewPasskey> {
  const { verifyRegistrationResponse } = await simpleWebAuthn()
  let verified
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: spend,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    })
  } catch {
    throw new PasskeyRefusal('verification_failed')
  }
  if (!verified.verified) throw new PasskeyRefusal('verification_failed')
  const info = verified.registrationInfo
  return {
    credentialId: info.credential.id,
    publicKey: info.credential.publicKey,
    signCount: info.credential.counter,
    transports: (response.response.transports ?? []).slice(0, 10),
    backupEligible: info.credentialDeviceType === 'multiDevice',
    backedUp: info.credentialBackedUp,
  }
}

export interface StoredPasskey {
  credentialId: string
  publicKey: Uint8Array
  signCount: number
  transports: string[]
  backupEligible: boolean
}

/**
 * L3 §7.2: type, challenge (spent once), origin, RP ID hash, user presence and verification, the
 * signature over authenticatorData ‖ SHA-256(clientDataJSON) with the stored key, the signature
 * counter (a counter that does not grow, when either is non-zero, is a cloned authenticator: refused),
 * and the backup eligibility flag, which a credential cannot change (§6.1.3). Answers what to store.
 */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  stored: StoredPasskey,
  spend: (challenge: string) => Promise<boolean>,
): Promise<{ signCount: number; backedUp: boolean }> {
  const { verifyAuthenticationResponse } = await simpleWebAuthn()
  let verified
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: spend,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: {
        id: stored.credentialId,
        publicKey: new Uint8Array(stored.publicKey),
        counter: stored.signCount,
        transports: stored.transports as AuthenticatorTransportFuture[],
      },
    })
  } catch {
    throw new PasskeyRefusal('verification_failed')
  }
  if (!verified.verified) throw new PasskeyRefusal('verification_failed')
  const info = verified.authenticationInfo
  if ((info.credentialDeviceType === 'multiDevice') !== stored.backupEligible)
    throw new PasskeyRefusal('backup_eligibility_changed')
  return { signCount: info.newCounter, backedUp: info.credentialBackedUp }
}
