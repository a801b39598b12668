import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of a server, which a test can cut and restore: cut, it drops
 * every open connection and resets each new one at once, as a server gone away does.
 */
export interface TcpProxy {
  port: number
  cut(): void
  restore(): void
  close(): Promise<void>
}

export async function startTcpProxy(targetPort: number, port = 0): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let open = true
  const server: Server = createServer((client) => {
    if (!open) return client.resetAndDestroy()
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort })
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {})
    }
    client.pipe(upstream).pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      open = false
      for (const s of sockets) s.resetAndDestroy()
    },
    restore() {
      open = true
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
