/**
 * What a span may say of a URL: its path, and of its query only the parameter names (a query can hold
 * a code, a state, a user code or a token: /oauth/authorize's answers, /device?user_code=…).
 */
export function redactedQuery(search: string): string {
  if (search === '' || search === '?') return ''
  const names = [...new URLSearchParams(search).keys()]
  return `?${names.map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&')}`
}

/** The path of a request target (`/device?user_code=…` → `/device`). */
export function pathOf(target: string): string {
  const end = target.search(/[?#]/)
  return end === -1 ? target : target.slice(0, end)
}
