/**
 * Where a sign-in may return to when it is not continuing an authorization request. The request
 * names a key of this table, never a URL, so there is nothing to turn into an open redirect.
 */
const RETURN_PATHS = {
  'account-apps': '/account/apps',
  'account-password': '/account/password',
  'account-passkeys': '/account/passkeys',
  'account-activity': '/account/activity',
} as const

export type ReturnKey = keyof typeof RETURN_PATHS

/** The path for a `next` value, or undefined for anything not in the table. */
export function returnPath(next: string | undefined): string | undefined {
  return next !== undefined && Object.hasOwn(RETURN_PATHS, next) ? RETURN_PATHS[next as ReturnKey] : undefined
}

/** /login that comes back to `key` after signing in. */
export const signInThenReturnTo = (key: ReturnKey) => `/login?next=${key}`
