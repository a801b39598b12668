/**
 * A third-party application using linkauth with oauth4webapi (npm install oauth4webapi).
 * Authorization Code flow with PKCE S256; a public client: no client secret.
 */
import * as oauth from 'oauth4webapi'

export interface LinkauthClientConfig {
  issuer: string // e.g. https://auth.example.com
  clientId: string // issued by the operator
  redirectUri: string // exactly as registered
}

/** What to keep (in the user's session on your side) between the redirect and the callback. */
export interface PendingAuthorization {
  codeVerifier: string
  state: string
}

export interface Tokens {
  accessToken: string
  refreshToken: string
  expiresIn: number
  scope: string
}

export function linkauthClient(config: LinkauthClientConfig) {
  const issuer = new URL(config.issuer)
  const client: oauth.Client = { client_id: config.clientId }
  const clientAuth = oauth.None() // public client: client_id only
  // oauth4webapi insists on https; plain http is for a development server on localhost only.
  const options = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {}
  let server: oauth.AuthorizationServer | undefined

  /** RFC 8414 discovery: endpoints, supported values, the key set URL. */
  async function authorizationServer(): Promise<oauth.AuthorizationServer> {
    server ??= await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oauth2' }),
    )
    return server
  }

  function toTokens(response: oauth.TokenEndpointResponse): Tokens {
    return {
      accessToken: response.access_token,
      refreshToken: response.refresh_token!,
      expiresIn: response.expires_in!,
      scope: response.scope!,
    }
  }

  return {
    /** Step 1: where to send the user's browser, and what to remember until the callback. */
    async startAuthorization(scope: string): Promise<{ url: URL; pending: PendingAuthorization }> {
      const as = await authorizationServer()
      const codeVerifier = oauth.generateRandomCodeVerifier()
      const state = oauth.generateRandomState()
      const url = new URL(as.authorization_endpoint!)
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: config.clientId,
        redirect_uri: config.redirectUri,
        scope, // space-separated, e.g. 'links:read links:write'
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      }).toString()
      return { url, pending: { codeVerifier, state } }
    },

    /** Step 2: the browser came back to redirect_uri; check state and iss, exchange the code. */
    async finishAuthorization(callbackUrl: URL, pending: PendingAuthorization): Promise<Tokens> {
      const as = await authorizationServer()
      // Throws oauth.AuthorizationResponseError when the user denied (error=access_denied) or on a
      // wrong state or iss.
      const params = oauth.validateAuthResponse(as, client, callbackUrl, pending.state)
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        params,
        config.redirectUri,
        pending.codeVerifier,
        options,
      )
      return toTokens(await oauth.processAuthorizationCodeResponse(as, client, response))
    },

    /**
     * Before the access token expires (or after a 401 from an API): a new pair. Store the new
     * refresh token at once; the old one is spent. On oauth.ResponseBodyError with error
     * 'invalid_grant' the authorization is gone: forget the tokens and start again at step 1.
     */
    async refresh(refreshToken: string): Promise<Tokens> {
      const as = await authorizationServer()
      const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshToken, options)
      return toTokens(await oauth.processRefreshTokenResponse(as, client, response))
    },

    /** Sign-out or uninstall: revoke the refresh token, which ends the whole token family. */
    async revoke(refreshToken: string): Promise<void> {
      const as = await authorizationServer()
      const response = await oauth.revocationRequest(as, client, clientAuth, refreshToken, {
        ...options,
        additionalParameters: { token_type_hint: 'refresh_token' },
      })
      await oauth.processRevocationResponse(response)
    },
  }
}

/** Calling a resource API with the access token. */
export async function callApi(url: string, accessToken: string): Promise<Response> {
  return fetch(url, { headers: { authorization: `Bearer ${accessToken}` } })
}
