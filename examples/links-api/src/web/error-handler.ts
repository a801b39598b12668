import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { InvalidRequestError, isDatabaseDown, LinksApiError, ServiceUnavailableError } from '../errors.js'
import { notFoundPage, visitorPage } from './pages.js'

/** JSON for the API, a page for people following short links. */
const isApi = (request: FastifyRequest) => request.url.startsWith('/api/')

/** Fastify's own client errors (bad JSON, wrong media type, body too large), in words. */
function clientError(error: Partial<FastifyError>): LinksApiError | undefined {
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

/** Every error becomes `{error, error_description}` (or a visitor's page) here, and nowhere else. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const known =
    error instanceof LinksApiError
      ? error
      : isDatabaseDown(error)
        ? new ServiceUnavailableError()
        : clientError(error as Partial<FastifyError>)
  if (!known || known.status >= 500) request.log.error({ err: error }, 'request failed')
  if (known?.status === 503) reply.header('retry-after', '5')
  const status = known?.status ?? 500
  // A person following a short URL gets a page; 400s there cannot happen (any path is a slug).
  if (!isApi(request) && (status === 404 || status >= 500)) return visitorPage(reply, status)
  reply.code(status).header('cache-control', 'no-store')
  return reply.send({
    error: known?.code ?? 'server_error',
    error_description: known?.description ?? 'An unexpected error occurred.',
  })
}

export async function errorHandling(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply))
  app.setNotFoundHandler((request, reply) =>
    isApi(request)
      ? reply.code(404).send({ error: 'not_found', error_description: 'No such endpoint.' })
      : notFoundPage(reply),
  )
}
