import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isConcurrencyConflict } from '../db/errors.js'
import {
  isDatabaseUnavailable,
  OAuthError,
  type OAuthErrorCode,
  ProblemError,
  RateLimitedError,
  statusTitle,
} from '../errors.js'
import type { AllowedMethods } from './allowed-methods.js'
import { errorStyleOf, trackAddressErrorStyles } from './error-style.js'
import { withBrand } from './brand.js'
import { uiOf } from './i18n/language.routes.js'
import { errorPage } from './layout.js'
import { rateLimitedPage } from './pages/rate-limited.page.js'
import { setNoStore } from './no-store.js'
import { traceRequest } from '../tracing/request-span.js'

const OAUTH_CODE_FOR_STATUS: Record<number, OAuthErrorCode> = {
  401: 'invalid_client',
  503: 'temporarily_unavailable',
  500: 'server_error',
}

/**
 * Turns any thrown error into the answer its route group promises (answerErrorsAs; for a request no
 * route took, the group owning its address); never a stack trace, never a 500 for bad input. A page
 * shows the listener's brand: the error may come before the handler that would have set it.
 */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return withBrand(request.server.brand, () => answerError(error, request, reply))
}

function answerError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const style = errorStyleOf(request)
  const { status, oauth, problem } = classify(error)
  traceRequest(request, { 'linkauth.outcome': oauth.code })
  if (status >= 500) request.log.error({ err: error }, logMessage(error, status))
  if (status === 503) reply.header('retry-after', '5')
  if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds))
  if (oauth.code === 'invalid_client' && style === 'oauth')
    reply.header('www-authenticate', 'Basic realm="linkauth"')
  reply.code(status)
  if (style === 'oauth') {
    return setNoStore(reply)
      .type('application/json; charset=utf-8')
      .send({ error: oauth.code, error_description: oauth.description })
  }
  if (style === 'problem') {
    return reply.type('application/problem+json; charset=utf-8').send(problem.toJSON())
  }
  const ui = uiOf(request)
  if (error instanceof RateLimitedError) {
    return reply
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(rateLimitedPage(ui, error.retryAfterSeconds))
  }
  const t = ui.t
  return reply.type('text/html; charset=utf-8').send(
    errorPage(ui, {
      title: status === 404 ? t.notFoundTitle : status >= 500 ? t.serverErrorTitle : t.requestErrorTitle,
      ...(status === 404 ? { message: t.notFoundMessage } : { detail: problem.detail }),
      code: error instanceof OAuthError ? oauth.code : undefined,
      advice: status >= 500 ? t.serverErrorAdvice : status === 404 ? t.notFoundAdvice : t.requestErrorAdvice,
    }),
  )
}

function classify(error: unknown): { status: number; oauth: OAuthError; problem: ProblemError } {
  if (error instanceof OAuthError) {
    return { status: error.status, oauth: error, problem: new ProblemError(error.status, error.description) }
  }
  if (error instanceof RateLimitedError) {
    // RFC 6749 has no code for "too many requests"; temporarily_unavailable is its code for "retry
    // later", which clients already handle with Retry-After (docs/integrating.md, Errors).
    const detail = `Too many requests. Retry after ${error.retryAfterSeconds} seconds.`
    return {
      status: 429,
      oauth: new OAuthError('temporarily_unavailable', detail, 429),
      problem: new ProblemError(429, detail),
    }
  }
  if (error instanceof ProblemError) {
    const code =
      OAUTH_CODE_FOR_STATUS[error.status] ?? (error.status >= 500 ? 'server_error' : 'invalid_request')
    return { status: error.status, oauth: new OAuthError(code, error.detail, error.status), problem: error }
  }
  // A deadlock victim that kept losing its retries wrote nothing: the same request may be sent again.
  if (isDatabaseUnavailable(error) || isConcurrencyConflict(error)) {
    const detail = 'The service is temporarily unavailable. Try again shortly.'
    return {
      status: 503,
      oauth: new OAuthError('temporarily_unavailable', detail),
      problem: new ProblemError(503, detail),
    }
  }
  const fastifyError = error as Partial<FastifyError>
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const detail = clientErrorDetail(fastifyError)
    return {
      status,
      oauth: new OAuthError('invalid_request', detail, status),
      problem: new ProblemError(status, detail),
    }
  }
  const detail = 'An unexpected error occurred.'
  return {
    status: 500,
    oauth: new OAuthError('server_error', detail),
    problem: new ProblemError(500, detail),
  }
}

function logMessage(error: unknown, status: number): string {
  if (status !== 503) return 'unexpected error'
  return isConcurrencyConflict(error) ? 'statement aborted by a concurrency conflict' : 'database unavailable'
}

function clientErrorDetail(error: Partial<FastifyError>): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported content type.'
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is too large.'
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return 'A part of the address is too long.'
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'The request body is not valid JSON.'
    default:
      return error.statusCode === 400 ? 'The request is malformed.' : statusTitle(error.statusCode ?? 400)
  }
}

/**
 * One error handler for every failure, and one answer for a request no route takes: 405 with Allow
 * when the path answers to other methods (`allowedMethods`, see allowed-methods.ts), else 404; both
 * in the style of the address (AddressErrorStyles).
 */
export async function errorHandling(
  app: FastifyInstance,
  allowedMethods: (url: string) => AllowedMethods = () => ({ methods: [] }),
): Promise<void> {
  trackAddressErrorStyles(app, (url) => allowedMethods(url).style)
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply))
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods(request.url).methods
    if (allowed.length === 0) return sendError(new ProblemError(404, 'Nothing is here.'), request, reply)
    const list = allowed.join(', ')
    reply.header('allow', list)
    return sendError(
      new ProblemError(405, `This address answers ${list}, not ${request.method}.`),
      request,
      reply,
    )
  })
}
