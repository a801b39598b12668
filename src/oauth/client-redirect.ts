import type { FastifyReply } from 'fastify'
import { traceRequest } from '../tracing/request-span.js'

/**
 * The redirect back to the client: our parameters appended to the registered redirect_uri's own
 * query, which is kept byte for byte (URLSearchParams would re-encode it if it owned the URL).
 * Only ever called with a redirect_uri that exactly matched the client's registration.
 */
export function clientRedirectUrl(redirectUri: string, params: Record<string, string | null>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) query.append(name, value)
  }
  const separator = !redirectUri.includes('?') ? '?' : /[?&]$/.test(redirectUri) ? '' : '&'
  return `${redirectUri}${separator}${query.toString()}`
}

/** Where and with what state an answer goes back to the client. */
export interface ClientTarget {
  redirectUri: string
  state: string | null
}

/**
 * Sends the browser back to the client with `params`, the request's state and our issuer as `iss`
 * (RFC 9207, against mix-up attacks). 302 after GET; 303 after a form POST (RFC 9700 §4.12) so the
 * browser never repeats the POST at the client.
 */
export function redirectToClient(
  reply: FastifyReply,
  issuer: string,
  target: ClientTarget,
  params: Record<string, string>,
  status: 302 | 303,
): FastifyReply {
  const url = clientRedirectUrl(target.redirectUri, { ...params, state: target.state, iss: issuer })
  traceRequest(reply.request, { 'linkauth.outcome': params.error ?? 'success' })
  return reply.header('cache-control', 'no-store').redirect(url, status)
}
