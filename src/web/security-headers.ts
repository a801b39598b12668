import type { FastifyInstance, FastifyReply } from 'fastify'
import { redirectUriOrigin } from '../clients/redirect-uri.js'

function contentSecurityPolicy(formActions: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    ["form-action 'self'", ...formActions].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ')
}

const CSP = contentSecurityPolicy()

/**
 * The CSP source of a registered redirect URI: its origin, or its scheme for a native app's
 * private-use scheme (RFC 8252). Undefined when it cannot be expressed safely.
 */
function cspSourceFor(redirectUri: string): string | undefined {
  const target = redirectUriOrigin(redirectUri)
  const source = target && ('web' in target ? target.web : target.scheme)
  return source && /^[A-Za-z0-9+.:/[\]-]+$/.test(source) ? source : undefined
}

/**
 * Chromium applies form-action to every redirect that follows a form submission, so the 303 to the
 * client after Allow/Deny (or after signing in, when consent is remembered) would be blocked by
 * form-action 'self' alone. Pages whose forms end at the client allow exactly that client's
 * registered redirect origin, and nothing else; every other page keeps 'self'.
 */
export function allowFormRedirectTo(reply: FastifyReply, redirectUri: string): void {
  const source = cspSourceFor(redirectUri)
  if (source) reply.header('content-security-policy', contentSecurityPolicy([source]))
}

/**
 * Pages that run our one script (/static/passkeys.js) and let it call our own endpoints: the page's
 * policy (after allowFormRedirectTo, when both apply) plus script-src and connect-src 'self'. No
 * inline script or style is ever allowed.
 */
export function allowOwnScript(reply: FastifyReply): void {
  const current = reply.getHeader('content-security-policy')
  reply.header(
    'content-security-policy',
    `${typeof current === 'string' ? current : CSP}; script-src 'self'; connect-src 'self'`,
  )
}

/** DESIGN §5: every answer carries these, pages and APIs alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
})

export function setSecurityHeaders(reply: FastifyReply): void {
  reply.headers(SECURITY_HEADERS)
}

export async function securityHeaders(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (_request, reply) => setSecurityHeaders(reply))
}
