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

/** `device-<uuid>`: the consent of a device request (RFC 8628), whose id the /device page found. */
const DEVICE_NEXT = /^device-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/** The path for a `next` value, or undefined for anything not in the table. */
export function returnPath(next: string | undefined): string | undefined {
  if (next === undefined) return undefined
  const device = DEVICE_NEXT.exec(next)
  if (device) return `/device/confirm?request=${device[1]}`
  return Object.hasOwn(RETURN_PATHS, next) ? RETURN_PATHS[next as ReturnKey] : undefined
}

/** /login that comes back to the consent of the device request `id` after signing in. */
export const signInThenConfirmDevice = (id: string) => `/login?next=device-${id}`

/** /login that comes back to `key` after signing in. */
export const signInThenReturnTo = (key: ReturnKey) => `/login?next=${key}`
