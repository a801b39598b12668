import { basicAuthorization, type Fetch, jsonObject, UpstreamError } from './http.js'

export interface EventStream {
  pollEndpoint: URL
  maxWaitSeconds: number
}

export interface PollRequest {
  ack: string[]
  setErrs: Record<string, { err: string; description: string }>
  maxEvents: number
  returnImmediately: boolean
}

export interface PollResponse {
  sets: Record<string, unknown>
  moreAvailable: boolean
}

/**
 * The HTTP side of linkauth's revocation feed: RFC 8936 poll-based delivery in streams, every call
 * authenticated with the resource server's credentials (HTTP Basic, as for introspection).
 */
export function createEventStreamClient(options: {
  streamsEndpoint: URL
  credentials: { id: string; secret: string }
  fetch: Fetch
}) {
  const authorization = basicAuthorization(options.credentials)

  async function post(url: URL, body: unknown, signal: AbortSignal, what: string) {
    const res = await options.fetch(url, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    })
    return jsonObject(res, what)
  }

  return {
    async createStream(signal: AbortSignal): Promise<EventStream> {
      const body = await post(options.streamsEndpoint, {}, signal, 'creating an event stream')
      const raw = body.poll_endpoint
      const pollEndpoint = typeof raw === 'string' && URL.canParse(raw) ? new URL(raw) : undefined
      // The poll endpoint receives our credentials: it must be on the server we were configured with.
      if (!pollEndpoint || pollEndpoint.origin !== options.streamsEndpoint.origin)
        throw new UpstreamError('event stream: poll_endpoint is missing or on another origin', 201)
      const maxWait = body.max_wait_seconds
      return { pollEndpoint, maxWaitSeconds: typeof maxWait === 'number' && maxWait > 0 ? maxWait : 25 }
    },

    async poll(stream: EventStream, request: PollRequest, signal: AbortSignal): Promise<PollResponse> {
      const body = await post(
        stream.pollEndpoint,
        {
          ack: request.ack,
          ...(Object.keys(request.setErrs).length > 0 ? { setErrs: request.setErrs } : {}),
          maxEvents: request.maxEvents,
          returnImmediately: request.returnImmediately,
        },
        signal,
        'polling the event stream',
      )
      const sets = body.sets
      if (typeof sets !== 'object' || sets === null || Array.isArray(sets))
        throw new UpstreamError('event stream: the answer has no sets object', 200)
      return { sets: sets as Record<string, unknown>, moreAvailable: body.moreAvailable === true }
    },
  }
}

export type EventStreamClient = ReturnType<typeof createEventStreamClient>
