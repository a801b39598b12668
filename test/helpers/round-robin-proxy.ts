import { createServer, request as forward, type Server } from 'node:http'

/** Which instance answered one request, as the proxy forwarded it. */
export interface Forwarded {
  method: string
  path: string
  /** Index into the proxy's target ports. */
  instance: number
}

/**
 * A round-robin HTTP proxy on 127.0.0.1 in front of several instances of a server, as a load
 * balancer without session affinity: request n goes to instance n mod count, whatever its cookies
 * say, and every request is recorded with the instance that answered it.
 */
export interface RoundRobinProxy {
  port: number
  url: string
  forwarded: Forwarded[]
  close(): Promise<void>
}

export async function startRoundRobinProxy(targetPorts: readonly number[]): Promise<RoundRobinProxy> {
  const forwarded: Forwarded[] = []
  let next = 0
  const server: Server = createServer((req, res) => {
    const instance = next++ % targetPorts.length
    forwarded.push({
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://x').pathname,
      instance,
    })
    const upstream = forward(
      {
        host: '127.0.0.1',
        port: targetPorts[instance],
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => req.socket.destroy())
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const port = (server.address() as { port: number }).port
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    forwarded,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
