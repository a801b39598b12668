import { createHmac } from 'node:crypto'
import { constantTimeEqual } from '../lib/secrets.js'

/**
 * CSRF tokens are an HMAC of the session's secret over what the form is for (e.g.
 * `authorize:<pending id>`), so a token from another session, or for another request, never fits.
 * Nothing to store: the token is recomputed and compared in constant time.
 */
export function csrfToken(sessionSecret: string, binding: string): string {
  return createHmac('sha256', sessionSecret).update(binding).digest('base64url')
}

export function isValidCsrfToken(sessionSecret: string, binding: string, token: unknown): boolean {
  return typeof token === 'string' && constantTimeEqual(csrfToken(sessionSecret, binding), token)
}

export const authorizeBinding = (pendingId: string) => `authorize:${pendingId}`
export const LOGOUT_BINDING = 'logout'
export const ACCOUNT_APPS_BINDING = 'account-apps'
export const ACCOUNT_PASSWORD_BINDING = 'account-password'
export const ACCOUNT_PASSKEYS_BINDING = 'account-passkeys'
