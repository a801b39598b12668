import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * BENCH_TRACING=1: an OTLP/HTTP endpoint on 127.0.0.1 that reads and discards what the server exports
 * (a collector that costs the server nothing more than a real one), counting the requests and bytes
 * so a run shows that spans went out. It runs in the bench's process: its CPU is the load's, not the
 * server's.
 */
export async function startOtlpSink() {
  let requests = 0
  let bytes = 0
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length))
    req.on('end', () => {
      requests++
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    summary: () => `OTLP export: ${requests} requests, ${(bytes / 1048576).toFixed(1)} MiB`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
