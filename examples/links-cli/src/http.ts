/**
 * The CLI's HTTP: JSON and form requests with a timeout, answers read as JSON when they are, and a
 * failure with a plain message (and exit code) instead of a stack trace.
 */

/** A failure the person reads: `message` on stderr, `exitCode` for scripts. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAILED,
  ) {
    super(message)
  }
}

/** The exit codes, as README.md lists them. */
export const EXIT = {
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  NOT_SIGNED_IN: 3,
  DENIED: 4,
  EXPIRED: 5,
} as const

export interface Answer {
  status: number
  headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any
}

/** OAuth's error answer (RFC 6749 §5.2), when it is one. */
export const oauthError = (answer: Answer): string | undefined =>
  typeof answer.json?.error === 'string' ? (answer.json.error as string) : undefined

/** error_description, or the error code, or the status: what to tell the person. */
export function describe(answer: Answer): string {
  const description = answer.json?.error_description ?? answer.json?.message
  const error = oauthError(answer)
  return (
    [error, typeof description === 'string' ? description : undefined].filter(Boolean).join(': ') ||
    `HTTP ${answer.status}`
  )
}

/**
 * http: only to this machine (localhost, 127.0.0.1, ::1); anything else must be https, since tokens
 * travel in these requests.
 */
export function checkTransport(url: string, what: string): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new CliFailure(`${what} is not a URL: ${url}`, EXIT.USAGE)
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname)
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback))
    throw new CliFailure(`${what} must be https (http only on this machine): ${url}`, EXIT.USAGE)
  return parsed
}

export async function request(
  url: string,
  init: { method?: string; form?: Record<string, string>; json?: unknown; token?: string } = {},
): Promise<Answer> {
  checkTransport(url, 'The address')
  const headers: Record<string, string> = { accept: 'application/json' }
  let body: string | undefined
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    body = new URLSearchParams(init.form).toString()
  } else if (init.json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(init.json)
  }
  if (init.token) headers.authorization = `Bearer ${init.token}`
  let res: Response
  try {
    res = await fetch(url, {
      method: init.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(15_000),
    })
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message
    throw new CliFailure(`Cannot reach ${new URL(url).origin} (${cause}).`)
  }
  const text = await res.text()
  let json: unknown
  if (text && (res.headers.get('content-type') ?? '').includes('json')) {
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
  }
  return { status: res.status, headers: res.headers, json }
}
