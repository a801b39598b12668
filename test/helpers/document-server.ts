import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generate } from 'selfsigned'

/**
 * A local HTTPS server that publishes Client ID Metadata Documents for tests, offline: a certificate
 * for 127.0.0.1 and localhost made at start (selfsigned, a fresh key each run), written as a PEM file
 * for CLIENT_METADATA_TEST_CA (the test-only trust setting). Each path answers what the test set:
 * a document, another status, a redirect, a slow or a large answer. It counts requests per path.
 */

export interface Answer {
  status?: number
  headers?: Record<string, string>
  body?: string
  /** Milliseconds before the answer's body is sent (headers go at once). */
  delayMs?: number
}

export interface DocumentServer {
  origin: string
  caPath: string
  /** client_id URL for a path, e.g. url('/client.json'). */
  url(path: string): string
  /** Publishes a JSON document at a path, with Cache-Control when given. */
  publish(path: string, document: unknown, headers?: Record<string, string>): string
  answer(path: string, answer: Answer): string
  hits(path: string): number
  close(): Promise<void>
}

export async function startDocumentServer(): Promise<DocumentServer> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  } as Parameters<typeof generate>[1])
  const dir = mkdtempSync(join(tmpdir(), 'linkauth-cimd-'))
  const caPath = join(dir, 'ca.pem')
  writeFileSync(caPath, pems.cert)
  const answers = new Map<string, Answer>()
  const counts = new Map<string, number>()
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname
    counts.set(path, (counts.get(path) ?? 0) + 1)
    const answer = answers.get(path) ?? { status: 404, body: '{}' }
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers })
    const send = () => res.end(answer.body ?? '')
    if (answer.delayMs) setTimeout(send, answer.delayMs).unref()
    else send()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  const url = (path: string) => `${origin}${path}`
  return {
    origin,
    caPath,
    url,
    publish(path, document, headers = {}) {
      answers.set(path, { body: JSON.stringify(document), headers })
      return url(path)
    },
    answer(path, answer) {
      answers.set(path, answer)
      return url(path)
    },
    hits: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A valid document for a client_id URL, with the fields given on top. */
export function clientDocument(clientId: string, fields: Record<string, unknown> = {}) {
  return {
    client_id: clientId,
    client_name: 'Agent Smith',
    redirect_uris: ['https://agent.example/callback'],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...fields,
  }
}
