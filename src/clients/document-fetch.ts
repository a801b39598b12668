import { lookup } from 'node:dns/promises'
import { request } from 'node:https'
import { isIP } from 'node:net'
import { addressProblem } from './address-policy.js'
import type { FetchSlots } from './fetch-slots.js'
import { tracedGet } from '../tracing/fetch-span.js'

/**
 * Fetching a client's metadata document: a URL anyone may hand us, so hostile by default (SSRF,
 * draft-ietf-oauth-client-id-metadata-document §8.6, §8.7). https only; the host is resolved once and
 * every address it resolves to must be public (address-policy.ts); the connection goes to the address
 * checked, never to a second resolution (no DNS rebinding); no redirect is followed; the answer must
 * be 200, JSON, at most `maxBytes`. One deadline, `timeoutMs`, covers it all: waiting for a slot
 * (fetch-slots.ts), the DNS lookup, the connection, headers and body.
 */

export interface DocumentFetchOptions {
  timeoutMs: number
  maxBytes: number
  /**
   * Test only (CLIENT_METADATA_TEST_CA, refused in production): a CA certificate (PEM) trusted beside
   * the system's, and loopback addresses allowed, so tests reach a local HTTPS server offline.
   */
  testCa?: string | undefined
  /** Every address a host name resolves to; DNS by default (tests pass their own). */
  resolve?: (hostname: string) => Promise<string[]>
  /**
   * The process's cap on fetches at once. A slot is held until the DNS lookup has settled too, even
   * one given up at the deadline: lookups run on libuv's thread pool, which argon2 shares.
   */
  slots?: FetchSlots | undefined
}

export interface FetchedDocument {
  body: unknown
  /** The answer's Cache-Control, for how long the document may be kept. */
  cacheControl: string | undefined
}

/** Why a document could not be fetched: a sentence for the error page and the logs, never a secret. */
export class DocumentFetchError extends Error {
  override name = 'DocumentFetchError'
}

/** No fetch slot freed within the deadline: the server is busy, the document may be fine. */
export class DocumentFetchBusy extends DocumentFetchError {
  override name = 'DocumentFetchBusy'
}

const systemResolve = async (hostname: string): Promise<string[]> =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

/** The one address to connect to, after every address of the host was checked. */
async function checkedAddress(
  url: URL,
  options: DocumentFetchOptions,
  deadline: Deadline,
  started: (lookup: Promise<unknown>) => void,
): Promise<string> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const allowLoopback = options.testCa !== undefined
  let addresses: string[]
  if (isIP(hostname)) addresses = [hostname]
  else {
    const lookup = (options.resolve ?? systemResolve)(hostname)
    started(lookup)
    try {
      addresses = await deadline.race(lookup)
    } catch (err) {
      if (err instanceof DocumentFetchError) throw err
      throw new DocumentFetchError(`its host ${hostname} does not resolve`)
    }
  }
  if (addresses.length === 0) throw new DocumentFetchError(`its host ${hostname} does not resolve`)
  for (const address of addresses) {
    const problem = addressProblem(address, { allowLoopback })
    if (problem) throw new DocumentFetchError(`its host ${hostname} resolves to ${address}, which ${problem}`)
  }
  return addresses[0]!
}

/** The fetch's one time limit, from its start: an abort signal, and a race against it. */
interface Deadline {
  signal: AbortSignal
  /** Rejects with the time-limit error as soon as the deadline passes. */
  race<T>(promise: Promise<T>): Promise<T>
  error(): DocumentFetchError
}

function startDeadline(timeoutMs: number): Deadline {
  const signal = AbortSignal.timeout(timeoutMs)
  const error = () => new DocumentFetchError(`it did not answer within ${timeoutMs} ms`)
  return {
    signal,
    error,
    race<T>(promise: Promise<T>): Promise<T> {
      if (signal.aborted) return Promise.reject(error())
      let onAbort = () => {}
      const late = new Promise<never>((_, reject) => {
        onAbort = () => reject(error())
        signal.addEventListener('abort', onAbort, { once: true })
      })
      return Promise.race([promise, late]).finally(() => signal.removeEventListener('abort', onAbort))
    },
  }
}

function isJson(contentType: string | undefined): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase()
  return type === 'application/json' || (type !== undefined && /^application\/[a-z0-9.+-]+\+json$/.test(type))
}

export async function fetchClientDocument(
  clientId: string,
  options: DocumentFetchOptions,
): Promise<FetchedDocument> {
  const url = new URL(clientId)
  if (url.protocol !== 'https:') throw new DocumentFetchError('it is not an https URL')
  return tracedGet(url, () => fetchFrom(url, options))
}

async function fetchFrom(url: URL, options: DocumentFetchOptions): Promise<FetchedDocument> {
  const deadline = startDeadline(options.timeoutMs)
  let release = () => {}
  if (options.slots) {
    try {
      release = await options.slots.acquire(deadline.signal)
    } catch {
      throw new DocumentFetchBusy(
        'this server is fetching as many documents as it may at once; try again in a moment',
      )
    }
  }
  let lookup: Promise<unknown> = Promise.resolve()
  try {
    const address = await checkedAddress(url, options, deadline, (started) => (lookup = started))
    return await download(url, address, options, deadline)
  } finally {
    void lookup.then(release, release)
  }
}

/** GET the document from the checked address, within what is left of the deadline. */
function download(
  url: URL,
  address: string,
  options: DocumentFetchOptions,
  deadline: Deadline,
): Promise<FetchedDocument> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return new Promise<FetchedDocument>((resolve, reject) => {
    const settle = () => deadline.signal.removeEventListener('abort', late)
    const fail = (reason: string | DocumentFetchError) => {
      settle()
      req.destroy()
      reject(typeof reason === 'string' ? new DocumentFetchError(reason) : reason)
    }
    const late = () => fail(deadline.error())
    const req = request({
      host: address,
      port: url.port === '' ? 443 : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      // The certificate is checked against the name in the URL (SNI too), not the address.
      ...(isIP(hostname) ? {} : { servername: hostname }),
      headers: { host: url.host, accept: 'application/json', 'user-agent': 'linkauth' },
      agent: false,
      ...(options.testCa !== undefined ? { ca: options.testCa } : {}),
    })
    if (deadline.signal.aborted) return late()
    deadline.signal.addEventListener('abort', late, { once: true })
    req.on('error', (err: NodeJS.ErrnoException) =>
      fail(
        err.code?.startsWith('ERR_TLS') || /certificate/i.test(err.message)
          ? 'its TLS certificate is not valid for its host'
          : `it could not be reached (${err.code ?? 'connection failed'})`,
      ),
    )
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400) return fail(`it answered ${status}: redirects are not followed`)
      if (status !== 200) return fail(`it answered ${status}, not 200`)
      if (!isJson(res.headers['content-type'])) return fail('its answer is not application/json')
      const declared = Number(res.headers['content-length'])
      if (declared > options.maxBytes) return fail(`it is larger than ${options.maxBytes} bytes`)
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > options.maxBytes) return fail(`it is larger than ${options.maxBytes} bytes`)
        chunks.push(chunk)
      })
      res.on('error', () => fail('its answer was cut off'))
      res.on('end', () => {
        settle()
        let body: unknown
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        } catch {
          return reject(new DocumentFetchError('its answer is not valid JSON'))
        }
        resolve({ body, cacheControl: res.headers['cache-control'] })
      })
    })
    req.end()
  })
}
