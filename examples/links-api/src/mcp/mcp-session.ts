import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * MCP sessions without server state (the links API keeps none between requests, so any instance
 * answers any request): a session id is a random part and a MAC over it and the user and client the
 * session was started for. A request carrying a session id is served only for that same user and
 * client (MCP security best practices, "session hijacking"): another user's token, or an id this
 * service never issued, is answered as an unknown session. Nothing is kept, so nothing can be ended
 * either: DELETE is answered 405, which the transport allows.
 */
export interface McpSessions {
  /** A new session id for the user (`sub`) of this client. */
  start(user: { sub: string; client_id: string }): string
  /** Whether `id` is a session this service started for this user and client. */
  belongsTo(id: string, user: { sub: string; client_id: string }): boolean
}

const MAC_LENGTH = 24
/**
 * Session ids already checked for a user and client, so that an agent's every call does not cost an
 * HMAC: the key is the whole id with the user and client, so nothing unchecked can match. Bounded:
 * the oldest entry goes first.
 */
const CHECKED_MAX = 10_000

/**
 * `secret`: the same on every instance (they must recognise each other's sessions); the links API
 * derives it from its MCP resource-server secret, which every instance already has.
 */
export function mcpSessions(secret: string | Buffer): McpSessions {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'linkauth links-api mcp session', 32))
  const mac = (nonce: string, user: { sub: string; client_id: string }) =>
    createHmac('sha256', key)
      .update(`${nonce}\n${user.sub}\n${user.client_id}`)
      .digest()
      .subarray(0, MAC_LENGTH)
  const checked = new Set<string>()
  return {
    start(user) {
      const nonce = randomBytes(18).toString('base64url')
      return `${nonce}.${mac(nonce, user).toString('base64url')}`
    },
    belongsTo(id, user) {
      const match = /^([A-Za-z0-9_-]{24})\.([A-Za-z0-9_-]{32})$/.exec(id)
      if (!match) return false
      const key = `${id}\n${user.sub}\n${user.client_id}`
      if (checked.has(key)) return true
      const given = Buffer.from(match[2]!, 'base64url')
      if (given.length !== MAC_LENGTH || !timingSafeEqual(given, mac(match[1]!, user))) return false
      if (checked.size >= CHECKED_MAX) checked.delete(checked.values().next().value!)
      checked.add(key)
      return true
    },
  }
}
