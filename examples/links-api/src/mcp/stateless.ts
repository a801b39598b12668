import type { IncomingHttpHeaders } from 'node:http'
import {
  type JSONRPCRequest,
  JSONRPCRequestSchema,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js'

/**
 * MCP 2026-07-28 (stateless) on /mcp, beside the 2025-11-25 lifecycle (initialize, sessions): how a
 * POST is told to be one or the other, and the checks the revision puts on a stateless request
 * before it is served. The revision has no handshake: every request carries its protocol version
 * and the client's capabilities in `params._meta`, and on HTTP the same version in the
 * MCP-Protocol-Version header and its method (and the tool's name) in Mcp-Method (Mcp-Name).
 */
export const STATELESS_REVISION = '2026-07-28'

/** The `_meta` keys of a 2026-07-28 request and result. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const

/** JSON-RPC codes the revision adds (-32020 and on) and the standard ones it answers with. */
export const RPC = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  headerMismatch: -32020,
  unsupportedProtocolVersion: -32022,
} as const

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** One header's value with the optional white space around it removed (RFC 9110 §5.5). */
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return typeof value === 'string' ? value.trim() : undefined
}

/**
 * Whether a POST is of the stateless revision, chosen per request: the MCP-Protocol-Version header
 * names a version other than the 2025 lifecycle's (2026-07-28, or one this server does not know,
 * which the stateless checks then refuse), or, without the header, the body carries the revision's
 * per-request `_meta` protocol version (refused for the missing header). Everything else (initialize,
 * requests of a session, a batch) is the 2025-11-25 lifecycle, as before.
 */
export function isStateless(headers: IncomingHttpHeaders, body: unknown): boolean {
  const version = header(headers, 'mcp-protocol-version')
  if (version !== undefined) return !SUPPORTED_PROTOCOL_VERSIONS.includes(version)
  if (!isObject(body) || !isObject(body.params)) return false
  const meta = body.params._meta
  return isObject(meta) && META.protocolVersion in meta
}

/** A JSON-RPC error answer; its id is null only when the request's could not be read. */
export interface RpcErrorAnswer {
  jsonrpc: '2.0'
  id: RequestId | null
  error: { code: number; message: string; data?: unknown }
}

/** A refusal with its HTTP status (the revision's: 400 for a malformed request, 404 for a method). */
export interface Refusal {
  status: number
  answer: RpcErrorAnswer
}

const refusal = (
  status: number,
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): Refusal => ({
  status,
  answer: { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } },
})

/** The HTTP status of an error the server answered a stateless request with. */
export function statusOfError(code: number): number {
  if (code === RPC.methodNotFound) return 404
  if (code === RPC.internalError) return 500
  if (code === RPC.invalidParams || code === RPC.invalidRequest || code <= -32020) return 400
  return 200
}

/** The methods whose target the Mcp-Name header names, and where the body has it. */
const NAMED: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
}

/**
 * The one JSON-RPC message of a stateless POST, checked as the revision says, in this order: a
 * request (a notification or response is accepted and not answered), the header's version against
 * the one this server serves (-32022, naming it), the `_meta` (-32602), the body's version against
 * the header's (-32020), then Mcp-Method and Mcp-Name against the body (-32020). Every refusal
 * carries the request's id.
 */
export function readStatelessRequest(
  body: unknown,
  headers: IncomingHttpHeaders,
): { ok: true; request: JSONRPCRequest | undefined } | ({ ok: false } & Refusal) {
  const refused = (id: RequestId | null, code: number, message: string, data?: unknown) => ({
    ok: false as const,
    ...refusal(400, id, code, message, data),
  })
  if (!isObject(body) || body.jsonrpc !== '2.0')
    return refused(null, RPC.invalidRequest, 'Invalid Request: one JSON-RPC 2.0 message')
  if (typeof body.method !== 'string' || !('id' in body)) {
    if (typeof body.method === 'string' || 'result' in body || 'error' in body)
      return { ok: true, request: undefined }
    return refused(null, RPC.invalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message')
  }
  const checked = JSONRPCRequestSchema.safeParse(body)
  if (!checked.success) {
    const id = typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null
    return refused(id, RPC.invalidRequest, 'Invalid Request: not a JSON-RPC 2.0 request')
  }
  const { id, method, params } = checked.data
  const version = header(headers, 'mcp-protocol-version')
  if (version !== undefined && version !== STATELESS_REVISION)
    return refused(id, RPC.unsupportedProtocolVersion, `Unsupported protocol version: ${version}`, {
      supported: [STATELESS_REVISION],
      requested: version,
    })
  const meta = params?._meta as Record<string, unknown> | undefined
  const requested = meta?.[META.protocolVersion]
  const clientInfo = meta?.[META.clientInfo]
  if (
    typeof requested !== 'string' ||
    !isObject(meta?.[META.clientCapabilities]) ||
    (clientInfo !== undefined && !isObject(clientInfo))
  )
    return refused(
      id,
      RPC.invalidParams,
      `Invalid params: _meta must carry ${META.protocolVersion} and ${META.clientCapabilities}`,
    )
  // Without the header, or with another version than the body's: they must agree.
  if (version !== requested)
    return refused(id, RPC.headerMismatch, 'Header mismatch: MCP-Protocol-Version differs from _meta')
  if (header(headers, 'mcp-method') !== method)
    return refused(id, RPC.headerMismatch, 'Header mismatch: Mcp-Method differs from the method')
  const named = NAMED[method]
  if (
    named !== undefined &&
    typeof params?.[named] === 'string' &&
    header(headers, 'mcp-name') !== params[named]
  )
    return refused(id, RPC.headerMismatch, `Header mismatch: Mcp-Name differs from params.${named}`)
  return { ok: true, request: checked.data }
}
