import * as oauth from 'oauth4webapi'

/** Plain http is allowed on the loopback only: the one special setting a standard client needs here. */
export const insecure = { [oauth.allowInsecureRequests]: true }

/** The authorization server's metadata as a standard client reads it (RFC 8414 discovery). */
export async function discover(issuer: URL): Promise<oauth.AuthorizationServer> {
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
  )
}
