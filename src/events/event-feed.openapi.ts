import { z } from 'zod'
import {
  jsonBody,
  oauthError,
  oauthRateLimited,
  oauthUnavailable,
  ok,
  type Operations,
} from '../openapi/describe.js'
import { createStreamRequestSchema, pollRequestSchema } from './event-feed.service.js'

export const createdEventStreamSchema = z.object({
  stream_id: z.string().meta({ description: 'Opaque; one stream per verifier instance.' }),
  poll_endpoint: z.string().meta({ description: 'Where this stream is polled.' }),
  max_wait_seconds: z
    .number()
    .int()
    .meta({ description: 'How long a poll is held when nothing is pending.' }),
})

export const pollResponseSchema = z.object({
  sets: z.record(z.string(), z.string()).meta({
    description:
      'Compact SETs (typ secevent+jwt, verifiable with jwks_uri) by their jti; empty when none arrived in time.',
  }),
  moreAvailable: z.boolean().meta({ description: 'More SETs are pending than maxEvents allowed.' }),
})

const feedAuthError = oauthError(
  'invalid_client: missing or wrong resource-server credentials, or a disabled resource server (WWW-Authenticate: Basic).',
)
const notJson = oauthError('invalid_request: a body that is not application/json.')

/** The revocation event feed (RFC 8417 SETs over RFC 8936 polling). */
export const eventFeedOperations: Operations = {
  '/api/events/streams': {
    post: {
      operationId: 'createEventStream',
      summary:
        'Revocation event feed: a new stream for one verifier instance, starting with every event still relevant.',
      security: [{ resourceServer: [] }],
      requestBody: jsonBody(createStreamRequestSchema, false),
      responses: {
        '201': ok('The stream and where to poll it.', createdEventStreamSchema),
        '400': oauthError('invalid_request: the body is not a JSON object.'),
        '401': feedAuthError,
        '415': notJson,
        '429': oauthError(
          'temporarily_unavailable: a rate limit, or the resource server already has ' +
            'EVENT_STREAMS_PER_RESOURCE_SERVER live streams (poll one of them); wait `Retry-After` seconds.',
        ),
        '503': oauthUnavailable,
      },
    },
  },
  '/api/events/streams/{stream_id}/poll': {
    post: {
      operationId: 'pollEvents',
      summary:
        'Poll a stream (RFC 8936 §2.4): acknowledge, then receive pending SETs, waiting up to max_wait_seconds for one.',
      security: [{ resourceServer: [] }],
      parameters: [{ name: 'stream_id', in: 'path', required: true, schema: { type: 'string' } }],
      requestBody: jsonBody(pollRequestSchema, false),
      responses: {
        '200': ok(
          'Pending SETs (unacknowledged ones again), or none after max wait or when the server stops.',
          pollResponseSchema,
        ),
        '400': oauthError('invalid_request: a member is of the wrong type or out of range, or not JSON.'),
        '401': feedAuthError,
        '404': oauthError(
          'invalid_stream: unknown, idle too long, or another resource server’s stream: create a new one.',
        ),
        '415': notJson,
        '429': oauthRateLimited,
        '503': oauthUnavailable,
      },
    },
  },
}
