import { z } from 'zod'
import { errorSchema, jsonSchema, ok as json, open, protectedResourceMetadataSchema } from '../web/openapi.js'
import { MAX_BATCH_SIZE } from './json-rpc.js'
import { MCP_BODY_LIMIT, MCP_PATH } from './mcp.routes.js'

/**
 * The MCP endpoint in the links API's OpenAPI document: one JSON-RPC route (its messages are the MCP
 * specification's, not described again here), its HTTP answers as mcp.routes.ts gives them, and its
 * RFC 9728 document. Its tokens are for its own resource identifier, hence a security scheme of its own.
 */

const rpcId = z.union([z.string(), z.number().int()])

/** A JSON-RPC 2.0 message (request, notification or response); its params are MCP's. */
const rpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: rpcId.optional().meta({ description: 'Absent on a notification.' }),
  method: z.string().optional().meta({ description: 'initialize, tools/list, tools/call, ping, …' }),
  params: z.record(z.string(), z.unknown()).optional(),
})

const rpcResponse = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: rpcId,
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
})

/** A refusal before any message was read: a JSON-RPC error without an id. */
const rpcError = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.null(),
  error: z.object({ code: z.number().int(), message: z.string() }),
})

/** A refusal of a 2026-07-28 request: under the request's id (null only if it could not be read). */
const statelessError = z.object({
  jsonrpc: z.literal('2.0'),
  id: rpcId.nullable(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
})

/** RFC 6750: the token's refusal, as on the REST routes (WWW-Authenticate names the metadata). */
const tokenError = errorSchema

const rpcRefusal = (description: string) => json(description, rpcError)
const tokenRefusal = json(
  'invalid_token: no token, or one expired, revoked, or for another resource (the REST API’s among them); ' +
    'WWW-Authenticate names /.well-known/oauth-protected-resource/mcp.',
  tokenError,
)
const unavailable = json(
  'temporarily_unavailable: the token cannot be checked right now; retry after Retry-After seconds.',
  tokenError,
)
const sessionHeader = {
  name: 'Mcp-Session-Id',
  in: 'header',
  required: false,
  description:
    'The session id the initialize answer gave; required on every other request. It is bound to the token’s user and client.',
  schema: { type: 'string' },
}
const versionHeader = {
  name: 'MCP-Protocol-Version',
  in: 'header',
  required: false,
  description:
    'The negotiated protocol revision (2025-11-25) on every request after initialize, or 2026-07-28 on ' +
    'every request of that revision (the same as its _meta’s).',
  schema: { type: 'string' },
}
const methodHeader = {
  name: 'Mcp-Method',
  in: 'header',
  required: false,
  description: '2026-07-28: the request’s method, required and equal to the body’s.',
  schema: { type: 'string' },
}
const nameHeader = {
  name: 'Mcp-Name',
  in: 'header',
  required: false,
  description: '2026-07-28: on tools/call, the tool’s name, required and equal to params.name.',
  schema: { type: 'string' },
}
const mcpToken = { security: [{ mcpAccessToken: [] as string[] }] }
/** GET and DELETE: the token is checked first, then the method is refused. */
const notAllowed = (operationId: string, summary: string) => ({
  operationId,
  summary,
  ...mcpToken,
  responses: {
    '401': tokenRefusal,
    '403': rpcRefusal('A browser Origin that may not call the endpoint (DNS rebinding).'),
    '405': rpcRefusal('Not allowed (Allow: POST).'),
  },
})

export const mcpSecurityScheme = {
  type: 'oauth2',
  description:
    'An access token from linkauth for the MCP endpoint’s own resource identifier (its URL, RFC 8707), ' +
    'as Bearer (RFC 6750) or DPoP (RFC 9449). Tokens for /api are refused here and these there.',
  flows: {
    authorizationCode: {
      authorizationUrl: '/oauth/authorize',
      tokenUrl: '/api/oauth/token',
      scopes: {
        'links:read': 'Call the tools that read links (list_links, get_link, link_stats, list_tags).',
        'links:write': 'Call the tools that change links (create_link, update_link, delete_link).',
      },
    },
  },
}

export function mcpOpenApiPaths() {
  return {
    [MCP_PATH]: {
      post: {
        operationId: 'mcp',
        summary:
          'The MCP endpoint for AI agents (Streamable HTTP, JSON-RPC 2.0, revisions 2025-11-25 and 2026-07-28).',
        description:
          `One JSON-RPC message or a batch (at most ${MAX_BATCH_SIZE}, answered in order), answered as JSON (never a stream). initialize opens a session ` +
          '(Mcp-Session-Id in the answer); tools/list and tools/call follow with it. Any valid token may ' +
          'initialize and list the tools; a tools/call needs the scope of the tool (links:read or links:write, ' +
          'named in each tool’s _meta["linkauth/scopes"]), else 403 insufficient_scope naming the scope to ' +
          'ask for. Accept must list application/json and text/event-stream. A request of revision 2026-07-28 ' +
          '(MCP-Protocol-Version: 2026-07-28, or its _meta version without the header) is stateless: one request, ' +
          'its _meta (protocolVersion, clientCapabilities) and the Mcp-Method/Mcp-Name headers checked, no ' +
          'session; server/discover, tools/list and tools/call are served, any other method is 404 -32601.',
        ...mcpToken,
        parameters: [sessionHeader, versionHeader, methodHeader, nameHeader],
        requestBody: {
          required: true,
          description: `At most ${MCP_BODY_LIMIT / 1024} KiB.`,
          content: {
            'application/json': {
              schema: jsonSchema(z.union([rpcMessage, z.array(rpcMessage).min(1).max(MAX_BATCH_SIZE)])),
            },
          },
        },
        responses: {
          '200': {
            ...json(
              'The answers to the requests of the body (one, or a batch); a failed tool is a result with isError.',
              z.union([rpcResponse, z.array(rpcResponse)]),
            ),
            headers: {
              'Mcp-Session-Id': {
                description: 'On the answer to initialize: the session id to send from then on.',
                schema: { type: 'string' },
              },
            },
          },
          '202': {
            description: 'The body held only notifications or responses: accepted, nothing to answer.',
          },
          '400': json(
            'No Mcp-Session-Id, an unsupported MCP-Protocol-Version (-32022), or a body that is not JSON or not ' +
              'JSON-RPC; for 2026-07-28 also _meta without its version or capabilities (-32602) and a header ' +
              'that disagrees with the body (-32020), under the request’s id.',
            z.union([rpcError, statelessError]),
          ),
          '401': tokenRefusal,
          '403': json(
            'insufficient_scope (RFC 6750, WWW-Authenticate with scope and resource_metadata: step up), or a ' +
              'JSON-RPC error for a browser Origin that may not call the endpoint (DNS rebinding).',
            z.union([tokenError, rpcError]),
          ),
          '404': json(
            'Session not found: an id this service never issued, or another user’s; for 2026-07-28, a method ' +
              'this server does not serve (initialize, ping, … : -32601, under the request’s id).',
            z.union([rpcError, statelessError]),
          ),
          '406': rpcRefusal('Accept does not list both application/json and text/event-stream.'),
          '413': rpcRefusal(`The body is larger than ${MCP_BODY_LIMIT / 1024} KiB.`),
          '415': rpcRefusal('The body is not application/json.'),
          '503': unavailable,
        },
      },
      get: notAllowed('mcpStream', 'No stream of server-initiated messages: 405 once the token is checked.'),
      delete: notAllowed('mcpEndSession', 'Sessions are kept by no one, so none is ended: 405.'),
    },
    '/.well-known/oauth-protected-resource/mcp': {
      get: {
        operationId: 'mcpProtectedResourceMetadata',
        summary: 'RFC 9728 metadata of the MCP endpoint (its own resource identifier): linkauth, the scopes.',
        ...open,
        responses: { '200': json('The metadata.', protectedResourceMetadataSchema) },
      },
    },
  }
}
