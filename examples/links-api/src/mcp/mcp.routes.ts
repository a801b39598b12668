import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  type AccessTokenClaims,
  authInfoOf,
  type ProtectedEndpoint,
  ResourceAuthError,
} from '@linkauth/resource'
import type { LinkTool } from './link-tools.js'
import { linksMcpServer, prepareTools } from './mcp-server.js'
import type { McpSessions } from './mcp-session.js'

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
/** The request headers the SDK's transport reads (the body is handed to it already parsed). */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified token of a /mcp request. */
    mcpAuth: { claims: AccessTokenClaims; token: string } | undefined
  }
}

/** A JSON-RPC error without an id (the request could not be read, or was refused before it was). */
function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('application/json')
    .send({ jsonrpc: '2.0', id: null, error: { code, message } })
}

interface RpcMessage {
  method?: unknown
  params?: { name?: unknown } | undefined
}

/**
 * POST /mcp: the MCP Streamable HTTP transport (2025-11-25) over the links API's tools, and its RFC
 * 9728 document at /.well-known/oauth-protected-resource/mcp. In order: the Origin (403), the token
 * for this endpoint's own audience (401, with the document named), the session's owner (400/404),
 * the scopes of the tools called (403 naming them, for step-up), then the SDK's transport, which
 * checks Accept, MCP-Protocol-Version and the JSON-RPC messages and answers JSON.
 */
export function mcpRoutes(deps: McpRouteDeps) {
  const { endpoint, sessions } = deps
  const scopesOf = new Map(deps.tools.map((tool) => [tool.name, tool.scopes]))
  const allowedOrigins = new Set(deps.allowedOrigins)

  /** Every scope the messages need: those of each tool called; anything else needs a valid token. */
  function neededScopes(messages: RpcMessage[]): string[] {
    const needed = new Set<string>()
    for (const m of messages)
      if (m.method === 'tools/call' && typeof m.params?.name === 'string')
        for (const scope of scopesOf.get(m.params.name) ?? []) needed.add(scope)
    return [...needed]
  }

  return async (app: FastifyInstance) => {
    const prepared = await prepareTools(deps.tools)
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
        const refusal = endpoint.refusal(err)
        return reply.code(refusal.status).headers(refusal.headers).send(refusal.body)
      }
    })

    // No stream for server-initiated messages, and sessions are not kept: both answered 405 (allowed).
    app.route({
      method: ['GET', 'DELETE'],
      url: MCP_PATH,
      handler: async (_request, reply) =>
        rpcError(reply.header('allow', 'POST'), 405, -32000, 'Method not allowed: POST only'),
    })

    app.post(MCP_PATH, { bodyLimit: MCP_BODY_LIMIT }, async (request, reply) => {
      const { claims, token } = request.mcpAuth!
      const messages = (Array.isArray(request.body) ? request.body : [request.body]) as RpcMessage[]
      const initializing = messages.some((m) => m?.method === 'initialize')
      const sessionId = request.headers['mcp-session-id']
      if (!initializing) {
        if (typeof sessionId !== 'string')
          return rpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
        if (!sessions.belongsTo(sessionId, claims)) return rpcError(reply, 404, -32001, 'Session not found')
      }
      const refused = endpoint.stepUp(claims, neededScopes(messages.filter(Boolean)))
      if (refused) {
        const refusal = endpoint.refusal(refused)
        return reply.code(refusal.status).headers(refusal.headers).send(refusal.body)
      }

      // A server and a transport for this request alone (the SDK refuses to reuse a stateless
      // transport, and a server serves one transport at a time). They are not closed: in JSON mode
      // the transport has answered every request of the body when handleRequest resolves, and
      // keeps nothing after; closing would only make the SDK build a ConnectionClosed error (a
      // stack trace) per request for handlers that are all done. Both are garbage after this.
      const server = linksMcpServer(prepared, claims.sub)
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
      await server.connect(transport)
      const headers: Record<string, string> = {}
      for (const name of TRANSPORT_HEADERS) {
        const value = request.headers[name]
        if (typeof value === 'string') headers[name] = value
      }
      const answer = await transport.handleRequest(
        new Request(endpoint.resource, { method: 'POST', headers }),
        {
          parsedBody: request.body,
          authInfo: authInfoOf(token, claims, endpoint.resource),
        },
      )
      const body = await answer.text()
      reply.code(answer.status).header('cache-control', 'no-store')
      answer.headers.forEach((value, name) => void reply.header(name, value))
      if (initializing && answer.ok) reply.header('mcp-session-id', sessions.start(claims))
      return reply.send(body === '' ? undefined : body)
    })
  }
}
