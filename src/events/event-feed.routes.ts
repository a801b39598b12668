import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { OAuthError } from '../errors.js'
import { authenticateResourceServer } from '../resource-servers/resource-server-auth.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import { createStreamRequestSchema, pollRequestSchema, type EventFeedService } from './event-feed.service.js'
import type { ResourceServerService } from '../resource-servers/resource-server.service.js'
import { noStore } from '../web/no-store.js'

/** The feed speaks JSON (RFC 8936 §2.4); no body at all is fine too. */
function assertJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type']?.split(';', 1)[0]!.trim().toLowerCase()
  if (request.body !== undefined && type !== 'application/json')
    throw new OAuthError('invalid_request', 'Send the request body as application/json.', 415)
}

/** The revocation event feed: POST /api/events/streams and POST /api/events/streams/{id}/poll. */
/** Retry-After when a resource server has all the streams it may have. */
const RETRY_STREAM_CREATION_SECONDS = 60

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface EventFeedServices {
  resourceServers: ResourceServerService
  events: EventFeedService
}

export function eventFeedRoutes(
  services: EventFeedServices,
  config: Pick<Config, 'issuer' | 'eventsMaxWaitSeconds'>,
) {
  return async (app: FastifyInstance) => {
    // A poll or a stream creation may come with Content-Type: application/json and no body at all.
    const json = app.getDefaultJsonParser('error', 'error')
    app.removeContentTypeParser('application/json')
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if (body === '') done(null, undefined)
      else json(request, body as string, done)
    })
    noStore(app)

    app.post('/api/events/streams', async (request, reply) => {
      const resourceServerId = await authenticateResourceServer(
        request.headers.authorization,
        services.resourceServers,
      )
      assertJsonBody(request)
      parseOrProblem(createStreamRequestSchema, request.body)
      const streamId = await services.events.createStream(resourceServerId)
      if (streamId === undefined) {
        // Streams idle longer than EVENT_STREAM_IDLE_SECONDS stop counting; a restarted verifier's
        // old stream does so within that time.
        reply.header('retry-after', String(RETRY_STREAM_CREATION_SECONDS))
        throw new OAuthError(
          'temporarily_unavailable',
          'This resource server has as many live event streams as it may. Poll an existing one, or retry when an unused one has gone idle.',
          429,
        )
      }
      return reply.code(201).send({
        stream_id: streamId,
        poll_endpoint: `${config.issuer}/api/events/streams/${streamId}/poll`,
        max_wait_seconds: config.eventsMaxWaitSeconds,
      })
    })

    app.post<{ Params: { stream_id: string } }>(
      '/api/events/streams/:stream_id/poll',
      // A resource server polls without end: its request lines at info would bury everything else.
      { config: { requestLines: 'debug' } },
      async (request, reply) => {
        const authenticate = () =>
          authenticateResourceServer(request.headers.authorization, services.resourceServers)
        const resourceServerId = await authenticate()
        assertJsonBody(request)
        const poll = parseOrProblem(pollRequestSchema, request.body)
        // A client that hangs up ends its wait; the listener's fan-out forgets it.
        const gone = new AbortController()
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) gone.abort()
        })
        // A held poll authenticates again while it waits: disabling its resource server ends it.
        return services.events.poll(resourceServerId, request.params.stream_id, poll, {
          signal: gone.signal,
          recheck: authenticate,
        })
      },
    )
  }
}
