import { z } from 'zod'
import { booleanish, ConfigError, optionalString, seconds } from './fields.js'

/** A 256-bit key: 64 hex characters or 43 base64url characters. */
const keyEncryptionKey = optionalString.pipe(
  z
    .string()
    .regex(
      /^([0-9a-fA-F]{64}|[A-Za-z0-9_-]{43}=?)$/,
      '32 bytes as 64 hex characters or 43 base64url characters',
    )
    .optional(),
)

const DURATION_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const
/** The shortest rotation period: the next key is published for part of it before it signs. */
const MIN_ROTATION_SECONDS = 3600

/** SIGNING_KEY_ROTATION: `off` (0) or a duration of at least an hour (`30d`, `12h`, `90m`); unset → undefined. */
const rotationPeriod = optionalString.pipe(
  z
    .string()
    .regex(/^(off|0|[1-9][0-9]{0,6}[smhdw])$/, 'a duration such as 30d, 12h or 90m, or "off"')
    .transform((v) =>
      v === 'off' || v === '0'
        ? 0
        : Number(v.slice(0, -1)) * DURATION_SECONDS[v.slice(-1) as keyof typeof DURATION_SECONDS],
    )
    .refine(
      (v) => v === 0 || (v >= MIN_ROTATION_SECONDS && v <= 10 * 365 * 86_400),
      'a duration from 1h to 3650d, or "off"',
    )
    .optional(),
)

/** SIGNING_KEY_ROTATION when unset with DATABASE_URL: 30 days. */
export const DEFAULT_ROTATION_SECONDS = 30 * 86_400

/** Signing keys and their encryption at rest; codes, access and refresh tokens; DPoP. */
export const tokenSchema = z.object({
  KEY_ENCRYPTION_KEY: keyEncryptionKey,
  /** The key-encryption key before the current one: only decrypts, while `linkauth keys rekey` re-encrypts. */
  KEY_ENCRYPTION_KEY_PREVIOUS: keyEncryptionKey,
  /** Scheduled signing-key rotation (`30d`, `off`); unset: 30d with DATABASE_URL, off on the embedded database. */
  SIGNING_KEY_ROTATION: rotationPeriod,
  SIGNING_ALG: z.enum(['ES256', 'EdDSA', 'RS256']).default('ES256'),
  AUTH_CODE_TTL: seconds(60),
  /** RFC 8628: how long a device code and its user code live; minutes, never hours (phishing). */
  DEVICE_CODE_TTL: z.coerce.number().int().min(60).max(1800).default(600),
  /** RFC 8628 §3.2: the seconds a device waits between polls at first (slow_down adds 5). */
  DEVICE_CODE_INTERVAL: z.coerce.number().int().min(1).max(60).default(5),
  ACCESS_TOKEN_TTL: seconds(600),
  REFRESH_TOKEN_TTL: seconds(30 * 24 * 3600),
  REFRESH_TOKEN_ABSOLUTE_TTL: seconds(180 * 24 * 3600),
  /**
   * Seconds after a refresh token rotated during which its client may present it again and get
   * tokens (a retry, not theft); 0 turns the window off. At most 5 minutes: longer is a second life.
   */
  REFRESH_REUSE_WINDOW: z.coerce.number().int().min(0).max(300).default(10),
  ACCESS_TOKEN_AUDIENCE: optionalString.pipe(z.string().min(1).optional()),
  /**
   * RFC 8707: every authorization request must name the API(s) it is for (`invalid_target` when it
   * names none), so that no token is issued for all the APIs serving its scopes. Off by default.
   */
  REQUIRE_RESOURCE: booleanish('false'),
  // DPoP (RFC 9449, docs/integrating.md "DPoP"): whether every token request must carry a proof,
  // and whether proofs must carry a server nonce (use_dpop_nonce with a DPoP-Nonce header first).
  DPOP_REQUIRED: booleanish('false'),
  DPOP_NONCE_REQUIRED: booleanish('false'),
  // Pushed authorization requests (RFC 9126, docs/integrating.md "Pushed authorization requests"):
  // whether every client must push its authorization requests, and how long a request_uri lives.
  REQUIRE_PAR: booleanish('false'),
  PAR_TTL: seconds(60),
})

export function checkTokenSettings(e: z.output<typeof tokenSchema>): void {
  if (e.REFRESH_TOKEN_ABSOLUTE_TTL < e.REFRESH_TOKEN_TTL) {
    throw new ConfigError('REFRESH_TOKEN_ABSOLUTE_TTL: expected a value no smaller than REFRESH_TOKEN_TTL')
  }
}
