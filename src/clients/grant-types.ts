/** RFC 8628 §3.4: the grant type of the device authorization grant. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code'

/** Every grant type a client may be allowed (RFC 7591 §2 grant_types). */
export const CLIENT_GRANT_TYPES = ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT_TYPE] as const

/** What a client may use when nobody said otherwise: the redirect flow, not the device grant. */
export const DEFAULT_GRANT_TYPES: string[] = ['authorization_code', 'refresh_token']

export const isClientGrantType = (value: string): boolean =>
  (CLIENT_GRANT_TYPES as readonly string[]).includes(value)

/** Sorted and without repeats, so equal sets compare equal. */
export const normalizeGrantTypes = (grantTypes: readonly string[]): string[] =>
  [...new Set(grantTypes)].sort()
