/** What the toolkit needs of fetch; the caller may pass its own (a proxy, a test double of the network). */
export type Fetch = typeof fetch

/** Calls to the authorization server never hang a request for longer than this. */
export const REQUEST_TIMEOUT_MS = 5_000

/**
 * A signal for one call: aborted when `parent` is, or after `ms`; `clear()` when the call is over.
 * Not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20 such a composite handed to
 * fetch can be garbage-collected while the call waits, and the timeout then never reaches it (under
 * load a long poll ran to the server's 25 s instead of its bound, and the feed went stale). A
 * controller kept by its own timer cannot be collected before it fires.
 */
export function boundedSignal(parent: AbortSignal, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController()
  const onAbort = () => controller.abort(parent.reason)
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
    ms,
  )
  if (parent.aborted) onAbort()
  else parent.addEventListener('abort', onAbort, { once: true })
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer)
      parent.removeEventListener('abort', onAbort)
    },
  }
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined and base64-encoded. */
export function basicAuthorization(credentials: { id: string; secret: string }): string {
  const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(credentials.id)}:${encode(credentials.secret)}`).toString('base64')}`
}

/** A failed call to the authorization server: its status (0 when none came back) and the error code. */
export class UpstreamError extends Error {
  override name = 'UpstreamError'
  constructor(
    message: string,
    readonly status: number,
    readonly error?: string,
  ) {
    super(message)
  }
}

/** The JSON object of a response, or an UpstreamError naming the status and the `error` member. */
export async function jsonObject(res: Response, what: string): Promise<Record<string, unknown>> {
  let body: unknown
  try {
    body = await res.json()
  } catch {
    throw new UpstreamError(`${what}: HTTP ${res.status}, not JSON`, res.status)
  }
  const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : undefined
  const error = object && 'error' in object && typeof object.error === 'string' ? object.error : undefined
  if (!res.ok)
    throw new UpstreamError(`${what}: HTTP ${res.status}${error ? ` ${error}` : ''}`, res.status, error)
  if (!object) throw new UpstreamError(`${what}: not a JSON object`, res.status)
  return object as Record<string, unknown>
}
