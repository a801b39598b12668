/**
 * A third-party application using linkauth with openid-client (npm install openid-client).
 * linkauth is an OAuth 2.0 server, not an OpenID Provider: discover it with algorithm 'oauth2'.
 */
import * as client from 'openid-client'

export type Tokens = client.TokenEndpointResponse & client.TokenEndpointResponseHelpers

export async function linkauthOpenIdClient(issuer: string, clientId: string, redirectUri: string) {
  const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), {
    algorithm: 'oauth2', // RFC 8414 metadata at /.well-known/oauth-authorization-server
    // openid-client insists on https; plain http is for a development server on localhost only.
    execute: issuer.startsWith('http:') ? [client.allowInsecureRequests] : [],
  })

  return {
    /** Where to send the user's browser, and what to keep in the session until the callback. */
    async startAuthorization(scope: string) {
      const codeVerifier = client.randomPKCECodeVerifier()
      const state = client.randomState()
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope, // space-separated, e.g. 'links:read links:write'
        state,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      })
      return { url, pending: { codeVerifier, state } }
    },

    /** The browser came back to redirect_uri: checks state and iss, exchanges the code. */
    finishAuthorization(callbackUrl: URL, pending: { codeVerifier: string; state: string }): Promise<Tokens> {
      return client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
      })
    },

    /** A new pair; keep the new refresh token, the old one is spent. */
    refresh: (refreshToken: string): Promise<Tokens> => client.refreshTokenGrant(config, refreshToken),

    /** Sign-out: revoking the refresh token ends its whole family. */
    revoke: (refreshToken: string) =>
      client.tokenRevocation(config, refreshToken, { token_type_hint: 'refresh_token' }),
  }
}
