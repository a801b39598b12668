import type { FastifyReply, FastifyRequest } from 'fastify'
import { ProblemError } from '../errors.js'
import type { SessionCookies } from './session-cookie.js'
import type { AuthorizeService } from '../oauth/authorize.service.js'
import type { ClientService } from '../clients/client.service.js'
import type { SessionService } from './session.service.js'

const EXPIRED_REQUEST =
  'This sign-in request has expired or was already used. Go back to the application and start again.'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface CompletionServices {
  sessions: SessionService
  authorize: AuthorizeService
  clients: ClientService
}

/**
 * The pending authorization a sign-in form carries (`request`), with how its application is shown
 * (name, host, standing: standing.ts), on the page where the person types a password.
 */
export async function pendingWithClient(services: CompletionServices, requestId: string | undefined) {
  if (requestId === undefined) return { pending: undefined, app: undefined }
  const pending = await services.authorize.findOpenPending(requestId)
  const client = pending && (await services.clients.findActiveClient(pending.clientId))
  if (!pending || !client) throw new ProblemError(400, EXPIRED_REQUEST)
  return { pending, app: await services.clients.displayOf(client) }
}

/**
 * The end of every successful sign-in, by password or passkey alike: the browser's previous session
 * ends, the new one is set, and the browser goes on to the authorization request it was signing in
 * for, or to the fixed page `next` names. 303, never 307: the browser must not repeat the POST.
 */
export async function completeSignIn(
  services: CompletionServices,
  cookies: SessionCookies,
  request: FastifyRequest,
  reply: FastifyReply,
  signedIn: { token: string; sessionId: string; pendingId: string | undefined; next: string | undefined },
): Promise<FastifyReply> {
  const previous = await cookies.currentSession(request, services.sessions)
  if (previous) await services.sessions.signOut(previous.id)
  cookies.setSession(reply, signedIn.token)
  if (!signedIn.pendingId) return reply.redirect(signedIn.next ?? '/login', 303)
  await services.authorize.recordSignIn(signedIn.pendingId, signedIn.sessionId)
  return reply.redirect(`/oauth/authorize/continue?request=${encodeURIComponent(signedIn.pendingId)}`, 303)
}
