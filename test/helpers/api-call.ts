/** What an example API answered: status, headers, the body parsed when it is JSON, and its text. */
export interface ApiAnswer {
  status: number
  headers: Headers
  body: Record<string, unknown>
  text: string
}

/**
 * One request to an example API over real HTTP, redirects not followed, with `token` as a Bearer
 * token. `json`: a value sent as JSON (a string is sent as is, as JSON); `raw`: a body sent as is
 * (a stream too) with content type `type`, if any; `headers` add to or override those.
 */
export async function apiCall(
  base: string,
  method: string,
  path: string,
  token: string | undefined,
  options: {
    json?: unknown
    raw?: string | ReadableStream<Uint8Array>
    type?: string
    headers?: Record<string, string>
  } = {},
): Promise<ApiAnswer> {
  const { json, raw } = options
  const type = json !== undefined ? 'application/json' : options.type
  const res = await fetch(`${base}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(type ? { 'content-type': type } : {}),
      ...options.headers,
    },
    body: json !== undefined ? (typeof json === 'string' ? json : JSON.stringify(json)) : raw,
    ...(raw instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit)
  const text = await res.text()
  let parsed: Record<string, unknown> = {}
  if (res.headers.get('content-type')?.includes('json') && text) parsed = JSON.parse(text)
  return { status: res.status, headers: res.headers, body: parsed, text }
}
