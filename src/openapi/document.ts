import { z } from 'zod'
import { newUserSchema } from '../accounts/user.service.js'
import { newClientSchema } from '../clients/client.service.js'
import type { Config } from '../config.js'
import { createStreamRequestSchema, pollRequestSchema } from '../events/event-feed.service.js'
import { newResourceServerSchema } from '../resource-servers/resource-server.service.js'
import * as s from './schemas.js'

/**
 * OpenAPI 3.1 descriptions of the two listeners, generated from zod schemas. Schemas are inlined
 * (no $ref) so that each response schema is a self-contained JSON Schema 2020-12 document.
 */

type JsonSchema = Record<string, unknown>
type Io = 'input' | 'output'

/** A zod schema as JSON Schema 2020-12 (the OpenAPI 3.1 dialect), without the $schema member. */
export function jsonSchema(schema: z.ZodType, io: Io = 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' })
  return rest
}

const json = (schema: z.ZodType, mediaType = 'application/json') => ({
  content: { [mediaType]: { schema: jsonSchema(schema) } },
})
const ok = (description: string, schema: z.ZodType, mediaType?: string) => ({
  description,
  ...json(schema, mediaType),
})
const oauthError = (description: string) => ok(description, s.oauthErrorSchema)
const problem = (description: string) => ok(description, s.problemSchema, 'application/problem+json')
const unavailable = { description: 'The database is unreachable; retry after `Retry-After` seconds.' }
const feedAuthError = oauthError(
  'invalid_client: missing or wrong resource-server credentials, or a disabled resource server (WWW-Authenticate: Basic).',
)
const rateLimited = oauthError(
  'temporarily_unavailable: a rate limit (per client or resource server and address, or per address for ' +
    'requests naming no valid caller); wait `Retry-After` seconds.',
)
const tooLarge = oauthError('invalid_request: the body is larger than BODY_LIMIT (64 KiB by default).')

const formAndJson = (schema: z.ZodType) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': { schema: jsonSchema(schema, 'input') },
    'application/json': { schema: jsonSchema(schema, 'input') },
  },
})
const jsonBody = (schema: z.ZodType, required = true) => ({
  required,
  content: { 'application/json': { schema: jsonSchema(schema, 'input') } },
})

const healthPaths = {
  '/healthz': {
    get: {
      operationId: 'liveness',
      summary: 'Liveness: the process answers.',
      responses: { '200': ok('Up.', s.livenessSchema) },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary: 'Readiness: the database answers and every migration is applied.',
      responses: {
        '200': ok('Ready for traffic.', s.readySchema),
        '503': ok('Not ready; `reason` says why.', s.notReadySchema),
      },
    },
  },
}

const openApiPath = (summary: string, responses: Record<string, object> = {}) => ({
  '/openapi.json': {
    get: {
      operationId: 'openapi',
      summary,
      responses: {
        '200': { description: 'An OpenAPI 3.1 document.', content: { 'application/json': {} } },
        ...responses,
      },
    },
  },
})

/** The public listener: OAuth endpoints, discovery, the account area's JSON API, health. */
export function publicOpenApiDocument(config: Pick<Config, 'issuer'>) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'linkauth public API',
      version: '1',
      description:
        'OAuth 2.0 authorization server (Authorization Code + PKCE S256, public clients). ' +
        'The OAuth interface is unversioned and changes only by addition; see docs/integrating.md.',
    },
    servers: [{ url: config.issuer }],
    components: {
      securitySchemes: {
        resourceServer: {
          type: 'http',
          scheme: 'basic',
          description: 'The id and secret of a resource server registered by the operator.',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'linkauth_session',
          description:
            'The sign-in session cookie; named `__Host-linkauth_session` when the issuer is https.',
        },
      },
    },
    paths: {
      '/oauth/authorize': {
        get: {
          operationId: 'authorize',
          summary: 'Authorization endpoint: the browser is sent here (RFC 6749 §4.1.1, RFC 7636).',
          parameters: [
            ['client_id', true, 'The client_id the operator issued.'],
            ['redirect_uri', true, 'Exactly one of the registered redirect URIs (exact string match).'],
            ['scope', true, 'Space-separated scopes.'],
            ['code_challenge', true, 'BASE64URL(SHA-256(code_verifier)): 43 characters.'],
            ['code_challenge_method', false, '`S256` (the default; `plain` is refused).'],
            ['response_type', false, '`code` (the default and only value).'],
            ['state', false, 'Echoed unchanged in the redirect; at most 1024 bytes.'],
            ['prompt', false, '`none`, `login`, `consent`, or `login consent`.'],
          ].map(([name, required, description]) => ({
            name,
            in: 'query',
            required,
            description,
            schema: { type: 'string' },
          })),
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
      '/api/oauth/token': {
        post: {
          operationId: 'token',
          summary: 'Token endpoint (RFC 6749 §3.2): exchange a code, or refresh. No client authentication.',
          requestBody: formAndJson(s.tokenRequestSchema),
          responses: {
            '200': ok('Tokens. Sent with Cache-Control: no-store.', s.tokenResponseSchema),
            '400': oauthError(
              'invalid_request, invalid_grant, invalid_scope, unauthorized_client or unsupported_grant_type.',
            ),
            '401': oauthError('invalid_client: unknown or disabled client_id.'),
            '413': tooLarge,
            '415': oauthError('invalid_request: neither form-encoded nor JSON.'),
            '429': rateLimited,
            '503': { ...oauthError('temporarily_unavailable.'), description: unavailable.description },
          },
        },
      },
      '/api/oauth/revoke': {
        post: {
          operationId: 'revoke',
          summary: 'Revocation (RFC 7009): revokes the token and the refresh-token family it belongs to.',
          requestBody: formAndJson(s.revocationRequestSchema),
          responses: {
            '200': {
              description:
                'Done, or the token was unknown, expired or not this client’s. Ignore the body: empty or `{}`.',
              content: { 'application/json': { schema: jsonSchema(z.object({})) } },
              'x-body-may-be-empty': true,
            },
            '400': oauthError('invalid_request: no token.'),
            '401': oauthError('invalid_client: unknown or disabled client_id.'),
            '413': tooLarge,
            '429': rateLimited,
            '503': { ...oauthError('temporarily_unavailable.'), description: unavailable.description },
          },
        },
      },
      '/api/oauth/introspect': {
        post: {
          operationId: 'introspect',
          summary: 'Introspection (RFC 7662) for registered resource servers.',
          security: [{ resourceServer: [] }],
          requestBody: formAndJson(s.introspectionRequestSchema),
          responses: {
            '200': ok('`{"active": false}` for any token that is not live.', s.introspectionResponseSchema),
            '400': oauthError('invalid_request: no token.'),
            '401': oauthError(
              'invalid_client: missing or wrong resource-server credentials (WWW-Authenticate: Basic).',
            ),
            '413': tooLarge,
            '429': rateLimited,
            '503': { ...oauthError('temporarily_unavailable.'), description: unavailable.description },
          },
        },
      },
      '/api/events/streams': {
        post: {
          operationId: 'createEventStream',
          summary:
            'Revocation event feed: a new stream for one verifier instance, starting with every event still relevant.',
          security: [{ resourceServer: [] }],
          requestBody: jsonBody(createStreamRequestSchema, false),
          responses: {
            '201': ok('The stream and where to poll it.', s.createdEventStreamSchema),
            '400': oauthError('invalid_request: the body is not a JSON object.'),
            '401': feedAuthError,
            '415': oauthError('invalid_request: a body that is not application/json.'),
            '429': oauthError(
              'temporarily_unavailable: a rate limit, or the resource server already has ' +
                'EVENT_STREAMS_PER_RESOURCE_SERVER live streams (poll one of them); wait `Retry-After` seconds.',
            ),
            '503': { ...oauthError('temporarily_unavailable.'), description: unavailable.description },
          },
        },
      },
      '/api/events/streams/{stream_id}/poll': {
        post: {
          operationId: 'pollEvents',
          summary:
            'Poll a stream (RFC 8936 §2.4): acknowledge, then receive pending SETs, waiting up to max_wait_seconds for one.',
          security: [{ resourceServer: [] }],
          parameters: [{ name: 'stream_id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: jsonBody(pollRequestSchema, false),
          responses: {
            '200': ok(
              'Pending SETs (unacknowledged ones again), or none after max wait or when the server stops.',
              s.pollResponseSchema,
            ),
            '400': oauthError('invalid_request: a member is of the wrong type or out of range, or not JSON.'),
            '401': feedAuthError,
            '404': oauthError(
              'invalid_stream: unknown, idle too long, or another resource server’s stream: create a new one.',
            ),
            '415': oauthError('invalid_request: a body that is not application/json.'),
            '429': rateLimited,
            '503': { ...oauthError('temporarily_unavailable.'), description: unavailable.description },
          },
        },
      },
      '/.well-known/oauth-authorization-server': {
        get: {
          operationId: 'metadata',
          summary: 'Authorization server metadata (RFC 8414).',
          responses: { '200': ok('The metadata.', s.authorizationServerMetadataSchema) },
        },
      },
      '/.well-known/jwks.json': {
        get: {
          operationId: 'jwks',
          summary: 'The public keys that sign access tokens (the active key and recently retired ones).',
          responses: {
            '200': ok('A JWK set; cache it for at most 60 s.', s.jwksSchema, 'application/jwk-set+json'),
            '503': problem('The database is unreachable.'),
          },
        },
      },
      '/api/account/apps': {
        get: {
          operationId: 'listConnectedApps',
          summary: 'The signed-in user’s connected applications (for the main site’s front end).',
          security: [{ session: [] }],
          responses: {
            '200': ok('The applications and a CSRF token for DELETE.', s.accountAppsSchema),
            '401': problem('Not signed in.'),
          },
        },
      },
      '/api/account/apps/{client_id}': {
        delete: {
          operationId: 'revokeConnectedApp',
          summary: 'Revoke an application: its grant and every token it holds stop working at once.',
          security: [{ session: [] }],
          parameters: [
            { name: 'client_id', in: 'path', required: true, schema: { type: 'string' } },
            {
              name: 'X-CSRF-Token',
              in: 'header',
              required: true,
              description: 'The `csrf_token` of GET /api/account/apps.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '204': { description: 'Revoked.' },
            '401': problem('Not signed in.'),
            '403': problem('Missing or wrong X-CSRF-Token.'),
            '404': problem('No connected application with this client_id.'),
          },
        },
      },
      ...healthPaths,
      ...openApiPath('This document.'),
    },
  }
}

const idParameter = (description: string) => ({
  name: 'id',
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
})
const badInput = problem('A field is invalid; `field` names it.')
const noToken = problem('No or wrong admin token (WWW-Authenticate: Bearer).')

/** The admin listener: the operator's API, every route behind the admin token except health. */
export function adminOpenApiDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'linkauth admin API',
      version: '1',
      description:
        'The operator API on the admin listener (ADMIN_HOST:ADMIN_PORT); the linkauth CLI uses it.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN.' } },
    },
    security: [{ adminToken: [] }],
    paths: {
      '/admin/clients': {
        post: {
          operationId: 'createClient',
          summary: 'Register a client application.',
          requestBody: jsonBody(newClientSchema),
          responses: { '201': ok('The client.', s.clientSchema), '400': badInput, '401': noToken },
        },
        get: {
          operationId: 'listClients',
          responses: {
            '200': ok('Every client, disabled ones included.', s.clientListSchema),
            '401': noToken,
          },
        },
      },
      '/admin/clients/{id}': {
        get: {
          operationId: 'getClient',
          parameters: [idParameter('The client_id.')],
          responses: {
            '200': ok('The client.', s.clientSchema),
            '401': noToken,
            '404': problem('No such client.'),
          },
        },
        delete: {
          operationId: 'disableClient',
          summary: 'Disable a client and revoke all its grants and tokens.',
          parameters: [idParameter('The client_id.')],
          responses: {
            '200': ok('The client, with disabled_at set.', s.clientSchema),
            '401': noToken,
            '404': problem('No such client.'),
          },
        },
      },
      '/admin/users': {
        post: {
          operationId: 'createUser',
          requestBody: jsonBody(newUserSchema),
          responses: {
            '201': ok('The user.', s.userSchema),
            '400': badInput,
            '401': noToken,
            '409': problem('A user with this email (in any case) exists.'),
          },
        },
        get: {
          operationId: 'listUsers',
          responses: { '200': ok('Every user.', s.userListSchema), '401': noToken },
        },
      },
      '/admin/users/{id}': {
        delete: {
          operationId: 'deleteUser',
          summary: 'Delete a user with every session, grant and token of theirs.',
          parameters: [idParameter('The user id (UUID).')],
          responses: {
            '204': { description: 'Deleted.' },
            '400': badInput,
            '401': noToken,
            '404': problem('No such user.'),
          },
        },
      },
      '/admin/resource-servers': {
        post: {
          operationId: 'createResourceServer',
          summary: 'Register a resource server: introspection credentials.',
          requestBody: jsonBody(newResourceServerSchema),
          responses: {
            '201': ok('The id and the secret (shown only here).', s.createdResourceServerSchema),
            '400': badInput,
            '401': noToken,
          },
        },
        get: {
          operationId: 'listResourceServers',
          responses: {
            '200': ok('Every resource server, without secrets.', s.resourceServerListSchema),
            '401': noToken,
          },
        },
      },
      '/admin/keys': {
        get: {
          operationId: 'listSigningKeys',
          responses: {
            '200': ok('Every signing key, public halves only.', s.signingKeyListSchema),
            '401': noToken,
          },
        },
      },
      '/admin/keys/rotate': {
        post: {
          operationId: 'rotateSigningKey',
          summary: 'Make a new signing key active; the old one stays published while its tokens live.',
          responses: { '201': ok('The new active key.', s.signingKeySchema), '401': noToken },
        },
      },
      '/admin/housekeeping/run': {
        post: {
          operationId: 'runHousekeeping',
          summary:
            'Delete expired rows now (what the HOUSEKEEPING_INTERVAL schedule does); answers when done.',
          responses: {
            '200': ok('What the run deleted.', s.housekeepingRunSchema),
            '401': noToken,
            '503': problem('The database is unreachable; retry after `Retry-After` seconds.'),
          },
        },
      },
      '/healthz': { get: { ...healthPaths['/healthz'].get, security: [] } },
      '/readyz': { get: { ...healthPaths['/readyz'].get, security: [] } },
      ...openApiPath('This document (behind the admin token).', { '401': noToken }),
    },
  }
}
