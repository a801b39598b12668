import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppLimitReachedError } from './app-leash.js'
import { ApiError, InvalidRequestError, isDatabaseDown, ServiceUnavailableError } from './errors.js'
import { notFoundPage, visitorPage } from './pages.js'

/**
 * How an API answers its JSON errors: `error` = `{error, error_description}` (the RFC 6749/6750
 * shape the links API has always answered), `problem` = RFC 9457 `application/problem+json`
 * (`type`, `title`, `status`, `detail`, and `code` and `field` beside them).
 */
export type ErrorFormat = 'error' | 'problem'

/** JSON for the API, a page for people following short links. */
const isApi = (request: FastifyRequest) => request.url.startsWith('/api/')

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

/** Fastify's own client errors (bad JSON, wrong media type, body too large), in words. */
function clientError(error: Partial<FastifyError>): ApiError | undefined {
  const status = error.statusCode
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined
  const description =
    error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
      ? 'Send the body as application/json.'
      : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? 'The request body is too large.'
        : error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
          ? 'The request body is not valid JSON.'
          : 'The request is malformed.'
  return new InvalidRequestError(description, status)
}

function sendJson(
  reply: FastifyReply,
  format: ErrorFormat,
  status: number,
  code: string,
  description: string,
  field?: string,
  details: Record<string, unknown> = {},
): FastifyReply {
  reply.code(status).header('cache-control', 'no-store')
  if (format === 'error') return reply.send({ error: code, error_description: description, ...details })
  return reply.type('application/problem+json; charset=utf-8').send({
    type: 'about:blank',
    title: TITLES[status] ?? 'Error',
    status,
    detail: description,
    code,
    ...(field === undefined ? {} : { field }),
    ...details,
  })
}

/** Every error becomes JSON in the API's format (or a visitor's page) here, and nowhere else. */
export function sendError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  format: ErrorFormat,
): FastifyReply {
  const known =
    error instanceof ApiError
      ? error
      : isDatabaseDown(error)
        ? new ServiceUnavailableError()
        : clientError(error as Partial<FastifyError>)
  if (!known || known.status >= 500) request.log.error({ err: error }, 'request failed')
  if (known?.status === 503) reply.header('retry-after', '5')
  if (known instanceof AppLimitReachedError) reply.header('retry-after', String(known.retryAfterSeconds))
  const status = known?.status ?? 500
  // A person following a short URL gets a page; 400s there cannot happen (any path is a slug).
  if (!isApi(request) && (status === 404 || status >= 500)) return visitorPage(reply, status)
  return sendJson(
    reply,
    format,
    status,
    known?.code ?? 'server_error',
    known?.description ?? 'An unexpected error occurred.',
    known?.field,
    known instanceof AppLimitReachedError ? known.details : undefined,
  )
}

/** The error and not-found handlers of an example API: JSON under /api/, pages elsewhere. */
export async function errorHandling(app: FastifyInstance, format: ErrorFormat = 'error'): Promise<void> {
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, format))
  app.setNotFoundHandler((request, reply) =>
    isApi(request) ? sendJson(reply, format, 404, 'not_found', 'No such endpoint.') : notFoundPage(reply),
  )
}
