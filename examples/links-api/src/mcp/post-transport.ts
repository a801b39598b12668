import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type {
  JSONRPCErrorResponse,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResultResponse,
  MessageExtraInfo,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js'

/** What the server answered to one request of a POST, under the id the client gave it. */
export type RpcAnswer = JSONRPCResultResponse | JSONRPCErrorResponse

interface Waiting {
  id: RequestId
  answer: (message: RpcAnswer) => void
}

/**
 * The Streamable HTTP transport in JSON-response mode, for ONE long-lived MCP server (the SDK's
 * `Server`) serving every POST of every client: the SDK's `Transport` interface, which its
 * Protocol drives, over requests the HTTP route has already read and checked.
 *
 * The SDK's own Streamable HTTP transport serves one client: stateless, it wants a new server and
 * transport per request, each request turned into a Web `Request` and its answer into a `Response`
 * read back as text; that was most of the MCP layer's cost per call (bench/README.md). Here the
 * route hands the parsed messages straight to the server and gets its answers as objects.
 *
 * Many clients share one server, so their request ids would collide (every client counts from 0
 * or 1): each request gets an id of this transport's own on the way in, and its answer gets the
 * client's id back on the way out. A client's `notifications/cancelled` names its own ids, which
 * the server never sees, so it is not passed on (a request is answered within its POST anyway; MCP
 * lets a receiver ignore a cancellation). What the server would send of its own accord (progress,
 * log messages, requests to the client) has no stream to go on in JSON mode, and is dropped, as by
 * the SDK's transport in that mode.
 */
export class PostTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void
  sessionId: string | undefined = undefined

  readonly #waiting = new Map<number, Waiting>()
  #nextId = 0
  #closed = false

  async start(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const [, waiting] of this.#waiting)
      waiting.answer({
        jsonrpc: '2.0',
        id: waiting.id,
        error: { code: -32000, message: 'The server is shutting down' },
      })
    this.#waiting.clear()
    this.onclose?.()
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message) || !('result' in message || 'error' in message)) return
    const waiting = this.#waiting.get(message.id as number)
    if (!waiting) return
    this.#waiting.delete(message.id as number)
    waiting.answer(
      'result' in message
        ? { jsonrpc: '2.0', id: waiting.id, result: message.result }
        : { jsonrpc: '2.0', id: waiting.id, error: message.error },
    )
  }

  /**
   * Hands one POST's messages to the server; resolves with the answers to its requests, in their
   * order, once every one is answered.
   */
  exchange(
    requests: readonly JSONRPCRequest[],
    notifications: readonly JSONRPCNotification[],
    extra: MessageExtraInfo,
  ): Promise<RpcAnswer[]> {
    if (this.#closed) return Promise.reject(new Error('The MCP transport is closed'))
    for (const notification of notifications)
      if (notification.method !== 'notifications/cancelled') this.onmessage?.(notification, extra)
    return Promise.all(
      requests.map(
        (request) =>
          new Promise<RpcAnswer>((answer) => {
            const id = this.#nextId++
            if (this.#nextId === Number.MAX_SAFE_INTEGER) this.#nextId = 0
            this.#waiting.set(id, { id: request.id, answer })
            this.onmessage?.({ ...request, id }, extra)
          }),
      ),
    )
  }
}
