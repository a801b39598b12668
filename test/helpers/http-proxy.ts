import { createServer, request as forward, type IncomingMessage, type Server } from 'node:http'
import type { Socket } from 'node:net'

/**
 * An HTTP proxy on 127.0.0.1 in front of a server, which a test can cut for some paths (the
 * revocation feed, say, while introspection still answers) and restore. Cut, it drops the open
 * requests on those paths and resets each new one, as a network gone away does.
 */
export interface HttpProxy {
  port: number
  cut(paths?: (path: string) => boolean): void
  restore(): void
  close(): Promise<void>
}

export async function startHttpProxy(targetPort: number): Promise<HttpProxy> {
  const open = new Map<IncomingMessage, Socket>()
  let blocked: ((path: string) => boolean) | undefined
  const isBlocked = (req: IncomingMessage) => blocked?.(new URL(req.url ?? '/', 'http://x').pathname) ?? false

  const server: Server = createServer((req, res) => {
    if (isBlocked(req)) return req.socket.resetAndDestroy()
    open.set(req, req.socket)
    const upstream = forward(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => req.socket.destroy())
    // The client went away (a verifier ending its long poll): so does the request upstream.
    res.on('close', () => {
      open.delete(req)
      upstream.destroy()
    })
    req.pipe(upstream)
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  return {
    port: (server.address() as { port: number }).port,
    cut(paths = () => true) {
      blocked = paths
      for (const [req, socket] of open) if (isBlocked(req)) socket.resetAndDestroy()
    },
    restore() {
      blocked = undefined
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
