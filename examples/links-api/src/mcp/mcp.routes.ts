import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type JSONRPCRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import {
  type AccessTokenClaims,
  authInfoOf,
  type ProtectedEndpoint,
  ResourceAuthError,
} from '@linkauth/resource'
import type { LinkTool } from './link-tools.js'
import { discoverResult, linksMcpServer, prepareTools, statelessToolList } from './mcp-server.js'
import type { McpSessions } from './mcp-session.js'
import { readMessages } from './json-rpc.js'
import { PostTransport, type RpcAnswer } from './post-transport.js'
import { isStateless, readStatelessRequest, RPC, type RpcErrorAnswer, statusOfError } from './stateless.js'

export interface McpRouteDeps {
  /** The endpoint's own resource identifier (its canonical URL), metadata and checks. */
  endpoint: ProtectedEndpoint
  tools: readonly LinkTool[]
  sessions: McpSessions
  /** Origins a browser may call from (DNS-rebinding protection); requests without Origin pass. */
  allowedOrigins: readonly string[]
}

export const MCP_PATH = '/mcp'
/** A tools/call with the longest target and ten tags is under 4 KiB; 64 KiB is plenty. */
export const MCP_BODY_LIMIT = 64 * 1024

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified token of a /mcp request. */
    mcpAuth: { claims: AccessTokenClaims; token: string } | undefined
  }
}

/** One JSON-RPC answer with its HTTP status; never kept by a cache (it is one user's). */
function sendRpc(reply: FastifyReply, status: number, answer: RpcAnswer | RpcErrorAnswer) {
  return reply.code(status).header('cache-control', 'no-store').type('application/json').send(answer)
}

/** A JSON-RPC error without an id (the request could not be read, or was refused before it was). */
const rpcError = (reply: FastifyReply, status: number, code: number, message: string) =>
  sendRpc(reply, status, { jsonrpc: '2.0', id: null, error: { code, message } })

/** Whether an Accept header lists both answers a client must accept (MCP transports: MUST). */
const acceptsBoth = (accept: string | undefined) =>
  accept !== undefined && accept.includes('application/json') && accept.includes('text/event-stream')

/**
 * POST /mcp: the MCP Streamable HTTP transport in JSON-response mode over the links API's tools, for
 * clients of both revisions on the same URL, and its RFC 9728 document at
 * /.well-known/oauth-protected-resource/mcp. For both, in order: the Origin (403), the token for this
 * endpoint's own audience (401, with the document named), Accept (406). Then each request is of one
 * revision (stateless.ts, isStateless):
 * - 2025-11-25: the JSON-RPC messages (400), the session's owner (400/404) and MCP-Protocol-Version
 *   (400), as that revision's lifecycle has them (initialize starts a session);
 * - 2026-07-28: one request, its `_meta` and standard headers (400, with the request's id), then
 *   `server/discover`, `tools/list` and `tools/call` are served and any other method is 404 -32601.
 * Last the scopes of the tools called (403 naming them, for step-up); one SDK server for every client
 * answers tools/call through the POST transport (post-transport.ts), acting for the token's user.
 */
export function mcpRoutes(deps: McpRouteDeps) {
  const { endpoint, sessions } = deps
  const scopesOf = new Map(deps.tools.map((tool) => [tool.name, tool.scopes]))
  const allowedOrigins = new Set(deps.allowedOrigins)

  /** The token's refusal as RFC 6750 (and MCP's authorization spec) answers it. */
  function refuse(reply: FastifyReply, err: ResourceAuthError) {
    const refusal = endpoint.refusal(err)
    return reply.code(refusal.status).headers(refusal.headers).send(refusal.body)
  }

  /** Every scope the messages need: those of each tool called; anything else needs a valid token. */
  function neededScopes(requests: readonly JSONRPCRequest[]): string[] {
    const needed = new Set<string>()
    for (const m of requests)
      if (m.method === 'tools/call' && typeof m.params?.name === 'string')
        for (const scope of scopesOf.get(m.params.name) ?? []) needed.add(scope)
    return [...needed]
  }

  return async (app: FastifyInstance) => {
    const prepared = await prepareTools(deps.tools)
    const discovery = discoverResult()
    const toolList = statelessToolList(prepared)
    const transport = new PostTransport()
    const server = linksMcpServer(prepared)
    // What the SDK reports here is a client's message it could not place (a progress notification
    // for no request, say): the client's doing, not the server's, so not a warning in the log.
    server.onerror = (err) => app.log.debug({ err }, 'MCP message not handled')
    await server.connect(transport)
    app.addHook('onClose', () => server.close())
    app.decorateRequest('mcpAuth', undefined)
    // Errors of this endpoint are JSON-RPC errors (transports §"Sending Messages to the Server").
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const status = error.statusCode ?? 500
      if (status >= 500) request.log.error({ err: error }, 'MCP request failed')
      if (status === 413) return rpcError(reply, 413, -32600, 'Request body too large')
      if (status === 415) return rpcError(reply, 415, -32000, 'Content-Type must be application/json')
      if (status === 400) return rpcError(reply, 400, -32700, 'Parse error: the body is not JSON')
      return rpcError(reply, status >= 500 ? 500 : status, -32603, 'Internal error')
    })

    app.get(endpoint.metadataPath, async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=3600')
        .header('access-control-allow-origin', '*')
        .send(endpoint.metadata),
    )

    // Checked before the body is read: a foreign page (DNS rebinding) or a bad token costs nothing.
    app.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.url !== MCP_PATH) return
      const origin = request.headers.origin
      if (origin !== undefined && !allowedOrigins.has(origin))
        return rpcError(reply, 403, -32000, 'Forbidden: this Origin may not call the MCP endpoint')
      try {
        const authorization = request.headers.authorization
        const claims = await endpoint.authenticate({
          authorization,
          dpop: request.headers.dpop,
          method: request.method,
          path: request.url,
        })
        request.mcpAuth = { claims, token: authorization!.slice(authorization!.indexOf(' ') + 1).trim() }
      } catch (err) {
        if (!(err instanceof ResourceAuthError)) throw err
        return refuse(reply, err)
      }
    })

    // No stream for server-initiated messages, and sessions are not kept: both answered 405 (allowed).
    app.route({
      method: ['GET', 'DELETE'],
      url: MCP_PATH,
      handler: async (_request, reply) =>
        rpcError(reply.header('allow', 'POST'), 405, -32000, 'Method not allowed: POST only'),
    })

    /** A 2026-07-28 request: checked, then answered with the revision's statuses and result fields. */
    async function serveStateless(request: FastifyRequest, reply: FastifyReply) {
      const { claims, token } = request.mcpAuth!
      const read = readStatelessRequest(request.body, request.headers)
      if (!read.ok) return sendRpc(reply, read.status, read.answer)
      const rpc = read.request
      if (rpc === undefined) return reply.code(202).send()
      if (rpc.method === 'server/discover')
        return sendRpc(reply, 200, { jsonrpc: '2.0', id: rpc.id, result: discovery })
      if (rpc.method === 'tools/list')
        return sendRpc(reply, 200, { jsonrpc: '2.0', id: rpc.id, result: toolList })
      if (rpc.method !== 'tools/call')
        return sendRpc(reply, 404, {
          jsonrpc: '2.0',
          id: rpc.id,
          error: { code: RPC.methodNotFound, message: `Method not found: ${rpc.method}` },
        })
      const refused = endpoint.stepUp(claims, neededScopes([rpc]))
      if (refused) return refuse(reply, refused)
      const [answer] = await transport.exchange([rpc], [], {
        authInfo: authInfoOf(token, claims, endpoint.resource),
      })
      if ('error' in answer!) return sendRpc(reply, statusOfError(answer.error.code), answer)
      return sendRpc(reply, 200, { ...answer!, result: { resultType: 'complete', ...answer!.result } })
    }

    app.post(MCP_PATH, { bodyLimit: MCP_BODY_LIMIT }, async (request, reply) => {
      const { claims, token } = request.mcpAuth!
      if (!acceptsBoth(request.headers.accept))
        return rpcError(
          reply,
          406,
          -32000,
          'Not Acceptable: the client must accept both application/json and text/event-stream',
        )
      if (isStateless(request.headers, request.body)) return serveStateless(request, reply)
      const posted = readMessages(request.body)
      if (!posted.ok) return rpcError(reply, 400, -32600, posted.message)
      const sessionId = request.headers['mcp-session-id']
      if (!posted.initializing) {
        if (typeof sessionId !== 'string')
          return rpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
        if (!sessions.belongsTo(sessionId, claims)) return rpcError(reply, 404, -32001, 'Session not found')
        // Without the header a server assumes 2025-03-26 (transports, "Protocol Version Header").
        const version = request.headers['mcp-protocol-version']
        if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
          return rpcError(
            reply,
            400,
            -32000,
            `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
          )
      }
      const refused = endpoint.stepUp(claims, neededScopes(posted.requests))
      if (refused) return refuse(reply, refused)
      const answers = await transport.exchange(posted.requests, posted.notifications, {
        authInfo: authInfoOf(token, claims, endpoint.resource),
      })
      // Only notifications or responses: accepted, nothing to answer (transports: 202, no body).
      if (answers.length === 0) return reply.code(202).send()
      reply.code(200).header('cache-control', 'no-store')
      // A session only for an initialize the server accepted (not one it answered with an error).
      if (posted.initializing && 'result' in answers[0]!)
        reply.header('mcp-session-id', sessions.start(claims))
      return reply.send(posted.batch ? answers : answers[0])
    })
  }
}
