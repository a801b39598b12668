import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { z } from 'zod'
import { type LinkTool, toolError } from './link-tools.js'

/** The server's name and version in the initialize answer. */
const SERVER_INFO = { name: 'linkauth-links-api', title: 'Short links', version: '1.0.0' }

const INSTRUCTIONS =
  'Short links of the signed-in user: create them, list them by tag, read their click statistics. ' +
  'Tools that change links need the links:write scope, the others links:read.'

/**
 * One JSON Schema validator for every server: the SDK makes a new Ajv per server unless given one,
 * which was most of the cost of a call (a server is made per request).
 */
const validator = new AjvJsonSchemaValidator()

/** A tool's SDK registration, built once: each request's server only registers it. */
interface PreparedTool {
  tool: LinkTool
  config: {
    title: string
    description: string
    inputSchema: z.ZodObject
    outputSchema: z.ZodObject
    annotations: { readOnlyHint: boolean; destructiveHint: boolean }
    _meta: Record<string, unknown>
  }
}

/** The tools' schemas as zod objects, made once for the process (a server is made per request). */
export function prepareTools(tools: readonly LinkTool[]): PreparedTool[] {
  return tools.map((tool) => ({
    tool,
    config: {
      title: tool.title,
      // The tool list says what each tool needs: in words for the model, in _meta for programs.
      description: `${tool.description} Needs the ${tool.scopes.join(' and ')} scope.`,
      inputSchema: z.object(tool.inputSchema),
      outputSchema: z.object(tool.outputSchema),
      annotations: { readOnlyHint: tool.readOnly, destructiveHint: tool.name === 'delete_link' },
      _meta: { 'linkauth/scopes': [...tool.scopes] },
    },
  }))
}

/**
 * The MCP server of one request, acting for `owner` (the token's user). The transport is stateless
 * (a new server per request, as the SDK's stateless examples do), so every instance of the API can
 * answer every request; the tools answer their REST twin's JSON as structured content, and the same
 * JSON as text for clients that read only text.
 */
export function linksMcpServer(prepared: readonly PreparedTool[], owner: string): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: validator,
  })
  for (const { tool, config } of prepared)
    server.registerTool(tool.name, config, async (args: Record<string, unknown>) => {
      try {
        const result = await tool.run(owner, args)
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result }
      } catch (err) {
        return toolError(err)
      }
    })
  return server
}
