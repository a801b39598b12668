/**
 * The redirect back to the client: our parameters appended to the registered redirect_uri's own
 * query, which is kept byte for byte (URLSearchParams would re-encode it if it owned the URL).
 * Only ever called with a redirect_uri that exactly matched the client's registration.
 */
export function clientRedirectUrl(redirectUri: string, params: Record<string, string | null>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) query.append(name, value)
  }
  const separator = !redirectUri.includes('?') ? '?' : /[?&]$/.test(redirectUri) ? '' : '&'
  return `${redirectUri}${separator}${query.toString()}`
}
