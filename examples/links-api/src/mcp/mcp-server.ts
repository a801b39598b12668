import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { InvalidRequestError } from '../errors.js'
import { type LinkTool, toolError } from './link-tools.js'
import { META, STATELESS_REVISION } from './stateless.js'
import { tracedToolCall } from './trace-context.js'
import { writingAppOf, type WritingApp } from '../../../shared/app-leash.js'
import type { AccessTokenClaims } from '@linkauth/resource'

/** The application calling, from the verified token's claims the route put beside the user. */
function callingApp(claims: unknown): WritingApp | undefined {
  return claims && typeof claims === 'object' ? writingAppOf(claims as AccessTokenClaims) : undefined
}

/** The server's name and version in the initialize answer. */
const SERVER_INFO = { name: 'linkauth-links-api', title: 'Short links', version: '1.0.0' }

const INSTRUCTIONS =
  'Short links of the signed-in user: create them, list them, search them by tag or text, read their ' +
  'click statistics. Tools that change links need the links:write scope, the others links:read.'

const OPTIONS = {
  capabilities: { tools: { listChanged: true } },
  instructions: INSTRUCTIONS,
  // One JSON Schema validator for every server: the SDK makes a new Ajv per server unless given one.
  jsonSchemaValidator: new AjvJsonSchemaValidator(),
}

/**
 * How long a 2026-07-28 client may keep the tool list and the discovery answer (`ttlMs`): the tools
 * change only with a new release of the API. Both are the same for every user (`cacheScope`
 * public).
 */
const CACHE_HINTS = { ttlMs: 5 * 60_000, cacheScope: 'public' } as const

/**
 * The answer to `server/discover` (MCP 2026-07-28): the one stateless revision served (the 2025
 * revisions are negotiated by `initialize`, not on this wire), the tools (whose list never changes
 * while the server runs, so no list_changed to subscribe to), and the server's name in `_meta`.
 */
export function discoverResult() {
  return {
    resultType: 'complete',
    supportedVersions: [STATELESS_REVISION],
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    ...CACHE_HINTS,
    _meta: { [META.serverInfo]: SERVER_INFO },
  }
}

/** The tools/list answer of a 2026-07-28 request: the list made once, with the caching hints. */
export const statelessToolList = (prepared: PreparedTools) => ({
  resultType: 'complete',
  ...prepared.list,
  ...CACHE_HINTS,
})

/** The tools, made once for the process. */
export interface PreparedTools {
  byName: ReadonlyMap<string, { tool: LinkTool; args: z.ZodObject }>
  /** The tools/list answer, as the SDK's McpServer writes it for these tools. */
  list: ListToolsResult
}

/**
 * The tools once: their registration with an McpServer of the SDK, whose tools/list answer (the JSON
 * Schemas of input and output, annotations, _meta) is read once through an in-memory client and
 * answered as is by every request's server.
 */
export async function prepareTools(tools: readonly LinkTool[]): Promise<PreparedTools> {
  const described = new McpServer(SERVER_INFO, OPTIONS)
  const byName = new Map<string, { tool: LinkTool; args: z.ZodObject }>()
  for (const tool of tools) {
    const args = z.object(tool.inputSchema)
    byName.set(tool.name, { tool, args })
    described.registerTool(
      tool.name,
      {
        title: tool.title,
        // The tool list says what each tool needs: in words for the model, in _meta for programs.
        description: `${tool.description} Needs the ${tool.scopes.join(' and ')} scope.`,
        inputSchema: args,
        outputSchema: z.object(tool.outputSchema),
        annotations: { readOnlyHint: tool.readOnly, destructiveHint: tool.name === 'delete_link' },
        _meta: { 'linkauth/scopes': [...tool.scopes] },
      },
      () => ({ content: [] }),
    )
  }
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'tool-list', version: '1' })
  await described.connect(serverSide)
  await client.connect(clientSide)
  const list = await client.listTools()
  await client.close()
  await described.close()
  return { byName, list: { tools: list.tools } }
}

/**
 * The links API's MCP server: ONE for the process, serving every client through the POST
 * transport (post-transport.ts), acting in each call for the token's user (`authInfo.extra.sub`,
 * which the route sets from the verified token). It keeps nothing of a client between calls, so
 * every instance of the API can answer every request. It is the SDK's low-level Server with two
 * handlers: tools/list answers the list made once, tools/call checks the arguments' types against
 * the tool's input schema (its REST twin's zod rules then check the values, once) and answers the
 * REST answer's JSON as structured content, and the same JSON as text (tools spec: SHOULD, for
 * clients that read only text). The structured content is the REST route's own JSON, made by the
 * same function. The client capabilities an `initialize` declares are not used (the server sends
 * clients no requests), so one client's do not matter to another's calls.
 */
export function linksMcpServer(prepared: PreparedTools): Server {
  // Server is the SDK's documented low-level API ("for advanced use cases"): McpServer would
  // validate each call's input and output a second time.
  const server = new Server(SERVER_INFO, OPTIONS)
  server.setRequestHandler(ListToolsRequestSchema, () => prepared.list)
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const owner = extra.authInfo?.extra?.sub
    // The route passes every call with its token's user; without one nothing may run.
    if (typeof owner !== 'string') throw new McpError(ErrorCode.InternalError, 'No user for this call')
    const entry = prepared.byName.get(request.params.name)
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`)
    const args = entry.args.safeParse(request.params.arguments ?? {})
    if (!args.success)
      return toolError(
        new InvalidRequestError(args.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')),
      )
    return tracedToolCall(request.params.name, request.params._meta, async (): Promise<CallToolResult> => {
      try {
        const result = await entry.tool.run(owner, args.data, callingApp(extra.authInfo?.extra?.claims))
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result }
      } catch (err) {
        return toolError(err)
      }
    })
  })
  return server
}
