import { z } from 'zod'
import { ConfigError, count, optionalString, secret, seconds } from './fields.js'

/** Sign-in sessions and their cookies, sign-in throttling, passkeys. */
export const accountSchema = z.object({
  COOKIE_SECRET: secret(32),
  SESSION_TTL: seconds(12 * 3600),
  /** Failed sign-ins per (account, address or known device) before the growing delay starts. */
  SIGN_IN_FREE_FAILURES: count(5),
  /** Cap of the growing delay, seconds. */
  SIGN_IN_MAX_DELAY: seconds(900),
  /** How long failures per (account, client) are remembered after the last one, seconds. */
  SIGN_IN_FAILURE_TTL: seconds(24 * 3600),
  /** Failed sign-ins per account from devices it does not know, per SIGN_IN_ACCOUNT_WINDOW. */
  SIGN_IN_ACCOUNT_LIMIT: count(20),
  SIGN_IN_ACCOUNT_WINDOW: seconds(900),
  /** Lifetime of the known-device cookie set at a successful sign-in, seconds. */
  KNOWN_DEVICE_TTL: seconds(180 * 24 * 3600),
  // Passkeys (docs/operating.md "Passkeys"): unset → on with an https issuer or http://localhost.
  PASSKEYS: optionalString.pipe(z.enum(['on', 'off']).optional()),
  /** The WebAuthn RP ID: the issuer's host name or a registrable suffix of it; unset → the issuer's host. */
  PASSKEY_RP_ID: optionalString.pipe(
    z
      .string()
      .regex(
        /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
        'a lower-case host name',
      )
      .optional(),
  ),
})

/**
 * WebAuthn works only in a secure context on a domain name (WebAuthn L3 §5.1.3, §13.4.9): an https
 * issuer, or http://localhost during development. The RP ID must be the issuer's host or a
 * registrable suffix of it (a deployment behind auth.example.com may bind passkeys to example.com).
 */
export function passkeySettings(
  issuer: string,
  setting: 'on' | 'off' | undefined,
  rpIdSetting: string | undefined,
): { passkeys: boolean; passkeyRpId: string } {
  const url = new URL(issuer)
  const host = url.hostname
  const usable = url.protocol === 'https:' || host === 'localhost' || host.endsWith('.localhost')
  const isIp = /^[0-9.]+$/.test(host) || host.startsWith('[')
  const rpId = rpIdSetting ?? host
  if (setting === 'on' && (!usable || isIp))
    throw new ConfigError(
      'PASSKEYS: expected "off" with this ISSUER (passkeys need an https issuer with a host name, or http://localhost)',
    )
  if (host !== rpId && !host.endsWith(`.${rpId}`))
    throw new ConfigError(`PASSKEY_RP_ID: expected the ISSUER's host name or a suffix of it, got "${rpId}"`)
  return { passkeys: setting ? setting === 'on' : usable && !isIp, passkeyRpId: rpId }
}
