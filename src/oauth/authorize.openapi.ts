import { open, type Operations } from '../openapi/describe.js'

const queryParameters: [name: string, required: boolean, description: string][] = [
  ['client_id', true, 'The client_id the operator issued.'],
  [
    'request_uri',
    false,
    'RFC 9126 §4: the `request_uri` the PAR endpoint (POST /api/oauth/par) answered this client, with ' +
      '`client_id` alone: every other parameter is then ignored (the pushed ones are used). Single use, ' +
      'short-lived (PAR_TTL); unknown, spent, expired or another client’s: an error page, never a redirect.',
  ],
  [
    'redirect_uri',
    true,
    'Exactly one of the registered redirect URIs (exact string match). Not sent with `request_uri`.',
  ],
  [
    'scope',
    false,
    'Space-separated scopes. Left out: the application’s default scopes (RFC 6749 §3.3), with `resource` ' +
      'only those the named APIs serve; `invalid_scope` when none applies.',
  ],
  ['code_challenge', true, 'BASE64URL(SHA-256(code_verifier)): 43 characters.'],
  ['code_challenge_method', false, '`S256` (the default; `plain` is refused).'],
  ['response_type', false, '`code` (the default and only value).'],
  ['state', false, 'Echoed unchanged in the redirect; at most 1024 bytes.'],
  ['prompt', false, '`none`, `login`, `consent`, or `login consent`.'],
  [
    'ui_locales',
    false,
    'OIDC ui_locales: space-separated language tags in order of preference; the sign-in and consent ' +
      'pages speak the first of `ui_locales_supported` among them (de-CH → de). None supported: not an error.',
  ],
  [
    'dpop_jkt',
    false,
    'RFC 9449 §10: the SHA-256 JWK thumbprint (RFC 7638, 43 characters of base64url) of the DPoP key the ' +
      'client will use; the code is bound to it, and the token request must carry a proof made with that ' +
      'key (else `invalid_grant`). Malformed: `invalid_request` in the redirect.',
  ],
]

/** GET /oauth/authorize: where the browser is sent (its forms and continuation are pages, not API). */
export const authorizeOperations: Operations = {
  '/oauth/authorize': {
    get: {
      operationId: 'authorize',
      summary: 'Authorization endpoint: the browser is sent here (RFC 6749 §4.1.1, RFC 7636).',
      ...open,
      parameters: [
        ...queryParameters.map(([name, required, description]) => ({
          name,
          in: 'query' as const,
          required,
          description,
          schema: { type: 'string' as const },
        })),
        {
          name: 'resource',
          in: 'query',
          required: false,
          description:
            'RFC 8707: an API the tokens are for, repeatable. Each must be exactly the identifier of a ' +
            'registered, enabled resource server that serves at least one requested scope; otherwise ' +
            '`invalid_target` (or `invalid_scope`) in the redirect. Left out, the tokens are for every API ' +
            'serving one of their scopes; required (invalid_target when missing) where the operator set REQUIRE_RESOURCE.',
          schema: { type: 'array', items: { type: 'string', format: 'uri', maxLength: 2048 } },
          style: 'form',
          explode: true,
        },
      ],
      responses: {
        '200': {
          description: 'The consent page (the user is signed in and has not approved these scopes yet).',
          content: { 'text/html': {} },
        },
        '302': {
          description:
            'Back to redirect_uri with `code`, `state`, `iss` (consent remembered), or with `error`, ' +
            '`error_description`, `state`, `iss`.',
        },
        '303': { description: 'To the sign-in page (/login), which continues this request afterwards.' },
        '400': {
          description:
            'Unknown client or unregistered redirect_uri, or more than 50 parameters: an HTML page, never a redirect.',
          content: { 'text/html': {} },
        },
        '429': {
          description:
            'Too many requests from this address (AUTHORIZE_RATE_LIMIT): an HTML page with `Retry-After`, never a redirect.',
          content: { 'text/html': {} },
        },
      },
    },
  },
}
