import { unescape } from 'node:querystring'
import { type DestinationStream, type Logger, pino, stdSerializers } from 'pino'

/** Query parameters and body fields whose values are secrets and must never reach a log line. */
export const SECRET_PARAMETERS = [
  'code',
  'code_verifier',
  'token',
  'refresh_token',
  'access_token',
  'password',
  'client_secret',
  'secret',
  'csrf_token',
  'id_token',
]

const SECRET_NAMES = new Set(SECRET_PARAMETERS)

/**
 * Replaces the values of secret query parameters in a URL with [Redacted]. Names are compared as the
 * server reads them (src/input/parameters.ts: node:querystring, `+` a space, percent-decoded, any
 * case here), so `to%6Ben=` or `%74oken=` is redacted as `token=` is.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?')
  if (start < 0) return url
  const hash = url.indexOf('#', start)
  const end = hash < 0 ? url.length : hash
  const query = url
    .slice(start + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      if (eq < 0) return pair
      const name = unescape(pair.slice(0, eq).replace(/\+/g, ' ')).toLowerCase()
      return SECRET_NAMES.has(name) ? `${pair.slice(0, eq)}=[Redacted]` : pair
    })
    .join('&')
  return `${url.slice(0, start + 1)}${query}${url.slice(end)}`
}

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  // A DPoP proof (RFC 9449) is single use and bound to its request, but names the key: not for logs.
  'req.headers.dpop',
  'headers.dpop',
  'res.headers["set-cookie"]',
  'res.headers.location',
  'headers.authorization',
  'headers.cookie',
  ...SECRET_PARAMETERS.flatMap((p) => [p, `*.${p}`, `body.${p}`, `req.body.${p}`]),
]

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      serializers: {
        req: (req: { method?: string; url?: string; ip?: string; id?: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url ? redactUrl(req.url) : undefined,
          ip: req.ip,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        // err.code falls under the `*.code` redaction (meant for authorization codes), yet a SQLSTATE
        // or a Node error code is what an operator needs to tell an outage from a bug.
        err: (err: Error & { code?: unknown }) => {
          const serialized = stdSerializers.err(err)
          const code = err?.code
          return typeof code === 'string' && /^([0-9A-Z]{5}|E[A-Z_]+|FST_[A-Z_]+)$/.test(code)
            ? { ...serialized, errorCode: code }
            : serialized
        },
      },
    },
    destination,
  )
}

/**
 * Where the server's log lines go: readable lines when a person watches a terminal (pino-pretty, a
 * dev dependency, so only where it is installed), JSON lines otherwise (pino's own stdout), which is
 * what log collectors read.
 */
export async function stdoutDestination(
  stdout: NodeJS.WritableStream & { isTTY?: boolean },
): Promise<DestinationStream | undefined> {
  if (!stdout.isTTY) return undefined
  try {
    const { default: pretty } = await import('pino-pretty')
    return pretty({
      destination: stdout,
      sync: true, // nothing lost when the process exits right after a line
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
    })
  } catch {
    return undefined
  }
}
