import {
  type JSONRPCNotification,
  type JSONRPCRequest,
  JSONRPCRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'

/**
 * The JSON-RPC messages of one POST to /mcp (MCP 2025-11-25 transports, "Sending Messages to the
 * Server"): one message, or a batch of them as clients of 2025-03-26 may still send (the SDK's own
 * transport accepts batches too, up to the same bound). Requests are checked against the SDK's own
 * schema, the one its Server dispatches by, so that every request taken here is one the server
 * answers; notifications and responses are only told apart by their members (the server never
 * answers them).
 */
export type PostedMessages =
  | {
      ok: true
      /** The body was a batch (the answers go back as an array). */
      batch: boolean
      requests: JSONRPCRequest[]
      notifications: JSONRPCNotification[]
      /** Whether one of the requests is `initialize`. */
      initializing: boolean
    }
  | { ok: false; message: string }

export const MAX_BATCH_SIZE = 100

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function kindOf(message: unknown): 'request' | 'notification' | 'response' | undefined {
  if (!isObject(message) || message.jsonrpc !== '2.0') return undefined
  if (typeof message.method === 'string') return 'id' in message ? 'request' : 'notification'
  if ('id' in message && ('result' in message || 'error' in message)) return 'response'
  return undefined
}

export function readMessages(body: unknown): PostedMessages {
  const batch = Array.isArray(body)
  const list: unknown[] = batch ? body : [body]
  if (list.length === 0) return { ok: false, message: 'Invalid Request: an empty batch' }
  if (list.length > MAX_BATCH_SIZE)
    return { ok: false, message: `Invalid Request: a batch has at most ${MAX_BATCH_SIZE} messages` }
  const requests: JSONRPCRequest[] = []
  const notifications: JSONRPCNotification[] = []
  for (const message of list) {
    const kind = kindOf(message)
    if (kind === undefined) return { ok: false, message: 'Invalid Request: not a JSON-RPC 2.0 message' }
    if (kind === 'request') {
      const checked = JSONRPCRequestSchema.safeParse(message)
      if (!checked.success) return { ok: false, message: 'Invalid Request: not a JSON-RPC 2.0 request' }
      requests.push(checked.data)
    } else if (kind === 'notification') notifications.push(message as JSONRPCNotification)
    // Responses: this server sends no requests, so there is nothing they could answer.
  }
  const initializing = requests.some((r) => r.method === 'initialize')
  if (initializing && list.length > 1)
    return { ok: false, message: 'Invalid Request: initialize must be sent alone' }
  return { ok: true, batch, requests, notifications, initializing }
}
