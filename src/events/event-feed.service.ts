import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { z } from 'zod'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import type { Listen, StopListening } from '../db/notifications.js'
import { OAuthError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isUuid } from '../lib/identifiers.js'
import type { ActiveSigningKey } from '../tokens/access-token.js'
import {
  insertEventStream,
  recordStreamPoll,
  type RevocationEvent,
  writeEventLifetime,
} from './event-stream.repository.js'
import { createPendingLookup } from './pending-lookup.js'
import { createPollWakeup } from './poll-wakeup.js'
import { signSecurityEventToken } from './security-event-token.js'

/** The channel the triggers of migration 0003 notify when they record an event. */
export const REVOCATION_EVENTS_CHANNEL = 'linkauth_revocation_events'

/**
 * Added to `until`: resource servers accept a token a little after its exp (their clock tolerance),
 * and an instance may issue a token a moment after another one revoked its grant.
 */
export const EVENT_UNTIL_LEEWAY_SECONDS = 60

/** The event lifetime is written again this often (expired events and idle streams: src/housekeeping). */
const REPUBLISH_INTERVAL_MS = 60_000

/** While no notification listener is up, held polls look at the database this often. */
const FALLBACK_RECHECK_MS = 500

/**
 * A held poll checks its caller's credentials again this often, and before it answers with events:
 * a resource server disabled (or whose secret ended) while its poll is held is answered 401 within
 * this time, the age of the credentials other instances keep in memory, rather than at max wait.
 */
const CREDENTIALS_RECHECK_MS = 5_000

/** Throws (401 invalid_client) when the caller's credentials no longer hold. */
export type RecheckCaller = () => Promise<unknown>

/** RFC 8936 §2.4 poll request members; unknown members are ignored. */
export const pollRequestSchema = z.object({
  ack: z
    .array(z.string().max(100))
    .max(1000, 'at most 1000 acknowledgements')
    .default([])
    .meta({ description: 'The jti of each SET received and processed: it is not delivered again.' }),
  setErrs: z
    .record(
      z.string().max(100),
      z.object({ err: z.string().max(100), description: z.string().max(1000).optional() }),
    )
    .refine((errs) => Object.keys(errs).length <= 1000, 'at most 1000 errors')
    .default({})
    .meta({
      description:
        'SETs received but not processable, by jti (RFC 8936 §2.4). Logged for the operator; they are not delivered again.',
    }),
  maxEvents: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(100)
    .meta({ description: 'At most this many SETs; 0 only acknowledges and answers at once.' }),
  returnImmediately: z
    .boolean()
    .default(false)
    .meta({ description: 'false (default): hold the request until an event arrives or max wait passes.' }),
})

/** An RFC 8936 §2.4 poll request, validated. */
export type PollRequest = z.output<typeof pollRequestSchema>

/** Creating a stream takes no parameters: no body, an empty one, or a JSON object. */
export const createStreamRequestSchema = z.object({})

/** An RFC 8936 §2.4 poll response: SETs by jti. */
export interface PollResponse {
  sets: Record<string, string>
  moreAvailable: boolean
}

const unknownStream = () =>
  new OAuthError(
    'invalid_stream',
    'No such event stream (unknown, idle too long, or not yours): create a new one.',
  )

export interface EventFeedDeps {
  db: Kysely<Database>
  clock: Clock
  logger: Logger
  config: Pick<
    Config,
    | 'issuer'
    | 'accessTokenTtl'
    | 'eventsMaxWaitSeconds'
    | 'eventStreamIdleSeconds'
    | 'eventStreamsPerResourceServer'
  >
  signingKeys: { activeSigningKey(): ActiveSigningKey }
  /** The database's notifications; without them held polls look every FALLBACK_RECHECK_MS. */
  listen?: Listen | undefined
  /** Counts SETs handed out (metrics). */
  delivered?(count: number): void
}

/**
 * The revocation event feed (RFC 8936 poll delivery of RFC 8417 SETs): streams per resource-server
 * instance, acknowledgements, and long polls woken by the database's notifications through one
 * listener per process.
 */
export function createEventFeedService(deps: EventFeedDeps) {
  const { db, clock, config, logger } = deps
  const wakeup = createPollWakeup({ fallbackMs: FALLBACK_RECHECK_MS })
  const pendingEvents = createPendingLookup(db, clock)
  let started = false
  let republisher: NodeJS.Timeout | undefined
  let stopListening: StopListening | undefined

  const idleSince = (now: Date) => addSeconds(now, -config.eventStreamIdleSeconds)
  // A stream's last poll is recorded to a tenth of the idle time: plenty to tell idle from polled.
  const touchBefore = (now: Date) => addSeconds(now, -config.eventStreamIdleSeconds / 10)

  function respond(events: RevocationEvent[], maxEvents: number, audience: string): PollResponse {
    const now = clock.now()
    const key = deps.signingKeys.activeSigningKey()
    const sets: Record<string, string> = {}
    for (const event of events.slice(0, maxEvents))
      sets[event.id] = signSecurityEventToken(event, { issuer: config.issuer, audience, now }, key)
    deps.delivered?.(Object.keys(sets).length)
    return { sets, moreAvailable: events.length > maxEvents }
  }

  /** Tells the triggers how long grant, family and client events live (they cannot read Config). */
  const publishEventLifetime = () =>
    writeEventLifetime(db, { accessTokenTtl: config.accessTokenTtl, leeway: EVENT_UNTIL_LEEWAY_SECONDS })

  /** Answers at once with what is pending, or holds until an event arrives or max wait passes. */
  async function awaitEvents(
    streamId: string,
    audience: string,
    request: PollRequest,
    held: { signal?: AbortSignal | undefined; recheck?: RecheckCaller | undefined },
  ): Promise<PollResponse> {
    const deadline = performance.now() + config.eventsMaxWaitSeconds * 1000
    for (;;) {
      // Armed before reading, so that an event committed between the read and the wait still wakes it.
      const armed = wakeup.arm()
      try {
        const events = await pendingEvents(streamId, request.maxEvents + 1)
        if (events.length > 0 || request.returnImmediately)
          return respond(events, request.maxEvents, audience)
        let outcome
        do {
          const left = deadline - performance.now()
          outcome = await armed.wait(Math.min(left, CREDENTIALS_RECHECK_MS), held.signal)
          if (outcome === 'closed') break
          await held.recheck?.()
        } while (outcome === 'timeout' && performance.now() < deadline)
        if (outcome !== 'wake') return { sets: {}, moreAvailable: false }
      } finally {
        armed.dispose()
      }
    }
  }

  return {
    /**
     * Publishes the event lifetime to the triggers (again every minute), starts listening for
     * notifications. A database that is down does not stop the start: the listener retries, and
     * held polls look every FALLBACK_RECHECK_MS meanwhile.
     */
    async start(): Promise<void> {
      if (started) return
      started = true
      await publishEventLifetime().catch((err: unknown) =>
        logger.warn({ err }, 'revocation event lifetime not written yet'),
      )
      stopListening = await deps.listen?.(REVOCATION_EVENTS_CHANNEL, {
        notify: () => wakeup.wakeAll(),
        listening: () => wakeup.setListening(true),
        lost: (err) => {
          wakeup.setListening(false)
          logger.warn(
            { err, recheckMs: FALLBACK_RECHECK_MS },
            'revocation event listener lost; reconnecting (held polls look at the database meanwhile)',
          )
        },
      })
      // Not only at start: a database that was down at start gets the setting later.
      republisher = setInterval(() => {
        publishEventLifetime().catch((err: unknown) =>
          logger.warn({ err }, 'revocation event lifetime not written'),
        )
      }, REPUBLISH_INTERVAL_MS)
      republisher.unref()
    },

    /** Answers every held poll now (the server is stopping) and stops listening. */
    async stop(): Promise<void> {
      wakeup.close()
      clearInterval(republisher)
      republisher = undefined
      const stop = stopListening
      stopListening = undefined
      await stop?.()
    },

    /** A new stream for one instance of a resource server; every still-relevant event is pending in it. */
    /**
     * A new stream, or undefined when the resource server already has EVENT_STREAMS_PER_RESOURCE_SERVER
     * live ones (a verifier restarting in a loop must not grow the feed's work without bound).
     */
    createStream(resourceServerId: string): Promise<string | undefined> {
      const now = clock.now()
      return insertEventStream(db, {
        resourceServerId,
        now,
        idleSince: idleSince(now),
        limit: config.eventStreamsPerResourceServer,
      })
    },

    /**
     * RFC 8936 §2.4: applies the acknowledgements (and the errors, which end redelivery as well:
     * the same event would fail again), then answers with pending SETs, holding the request while
     * there are none unless returnImmediately. `held.signal` ends the wait when the client goes
     * away; `held.recheck` is called every CREDENTIALS_RECHECK_MS while the poll is held and after
     * every wake, and its throw (the caller was disabled) is the answer.
     */
    async poll(
      resourceServerId: string,
      streamId: string,
      request: PollRequest,
      held: { signal?: AbortSignal; recheck?: RecheckCaller } = {},
    ): Promise<PollResponse> {
      // Stream ids and acknowledgements name our rows, which are UUIDs; anything else matches none.
      if (!isUuid(streamId)) throw unknownStream()
      const errors = Object.keys(request.setErrs)
      const now = clock.now()
      const live = await recordStreamPoll(db, {
        streamId,
        resourceServerId,
        acknowledged: [...request.ack, ...errors].filter(isUuid),
        now,
        idleSince: idleSince(now),
        touchBefore: touchBefore(now),
      })
      if (!live) throw unknownStream()
      if (errors.length > 0)
        logger.warn(
          { resourceServerId, streamId, setErrs: request.setErrs },
          'a resource server could not process security event tokens',
        )
      if (request.maxEvents === 0) {
        // Acknowledge-only (RFC 8936 §2.4.1): no SETs, no wait; moreAvailable says whether to poll.
        const pending = await pendingEvents(streamId, 1)
        return { sets: {}, moreAvailable: pending.length > 0 }
      }
      return awaitEvents(streamId, resourceServerId, request, held)
    },

    /** A stream not polled since this time is gone (housekeeping deletes it). */
    idleSince,

    /** Polls armed or held right now. */
    get waiting(): number {
      return wakeup.waiting
    },
  }
}

export type EventFeedService = ReturnType<typeof createEventFeedService>
