import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { HttpBrowser } from './http-browser.js'

/** The agent's redirect URI: the test reads the code from it rather than listening there. */
export const AGENT_REDIRECT_URI = 'https://agent.example/callback'

/**
 * How the agent's client is known to linkauth: registered by the operator (client_id given), by a
 * client-id metadata document, or by dynamic registration (the SDK's own fallback).
 */
export type AgentRegistration =
  | { kind: 'pre-registered'; clientId: string }
  /** The https URL of the agent's Client ID Metadata Document, which is its client_id. */
  | { kind: 'metadata-document'; url: string }
  /** Nothing: the SDK registers the agent at linkauth's registration endpoint (RFC 7591). */
  | { kind: 'dynamic' }

/**
 * The SDK's OAuth provider as an MCP host implements it, its user played by an HttpBrowser: where
 * the SDK sends the user to authorize, the test signs in and allows, and keeps the code for
 * `transport.finishAuth`. `keepRefreshToken: false` drops refresh tokens, as a client that keeps
 * none: SDK 1.32's step-up tries a refresh first, which cannot widen the scope
 * (modelcontextprotocol/typescript-sdk#2255).
 */
export class BrowserAgentProvider implements OAuthClientProvider {
  /** The browser of the last authorization: signed in at linkauth (its /account/apps pages work). */
  browser: HttpBrowser
  authorizationUrls: URL[] = []
  /** The consent pages the user saw, in order (HTML). */
  consentPages: string[] = []
  private saved: OAuthTokens | undefined
  private verifier = ''
  private client: OAuthClientInformationMixed | undefined
  /** The code of the last authorization the user allowed. */
  code: string | undefined

  constructor(
    private readonly issuer: string,
    registration: AgentRegistration,
    private readonly user: { email: string; password: string },
    private readonly options: { keepRefreshToken?: boolean } = {},
  ) {
    this.browser = new HttpBrowser(issuer)
    if (registration.kind === 'pre-registered') this.client = { client_id: registration.clientId }
    else if (registration.kind === 'metadata-document') this.clientMetadataUrl = registration.url
  }

  /** SEP-991: the SDK uses it as the client_id where the server supports metadata documents. */
  readonly clientMetadataUrl: string | undefined

  get redirectUrl() {
    return AGENT_REDIRECT_URI
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test agent',
      redirect_uris: [AGENT_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    const { refresh_token: _dropped, ...rest } = tokens
    this.saved = this.options.keepRefreshToken === false ? rest : tokens
  }
  /** What the SDK calls when linkauth refuses the refresh token (revoked) or the client. */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }

  /** The user at the authorization server: signs in (a fresh browser each time) and allows. */
  async redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url)
    if (url.origin !== this.issuer) throw new Error(`sent to ${url.origin}, not the issuer`)
    this.browser = new HttpBrowser(this.issuer)
    const callback = await this.browser.signInAndAllow(
      url.pathname + url.search,
      this.user.email,
      this.user.password,
      (page) => this.consentPages.push(page),
    )
    this.code = callback.searchParams.get('code') ?? undefined
  }

  /** The code of the authorization just done, once. */
  takeCode(): string {
    const code = this.code
    if (!code) throw new Error('no authorization code')
    this.code = undefined
    return code
  }
}
