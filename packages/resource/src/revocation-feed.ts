import { setTimeout as sleep } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'
import type { EventStream, EventStreamClient, PollRequest } from './event-stream-client.js'
import { boundedSignal, UpstreamError } from './http.js'
import type { JwksCache } from './jwks-cache.js'
import type { ResourceLogger } from './logger.js'
import type { RevocationSet } from './revocation-set.js'
import { readRevocationEvent, SetError, SetKeyUnknownError } from './security-event.js'

const MAX_EVENTS = 500
const MIN_BACKOFF_MS = 200
const MAX_BACKOFF_MS = 5_000
/** After a SET whose key is missing even from a key set fetched after it arrived: wait, then ask again. */
const MISSING_KEY_RETRY_MS = 1_000

export interface RevocationFeedOptions {
  client: EventStreamClient
  issuer: string
  /** The resource server's id: the audience of its SETs. */
  audience: string
  jwks: JwksCache
  revocations: RevocationSet
  /** Out of contact longer than this, the feed is stale. */
  stalenessMs: number
  logger: ResourceLogger
}

/** The outcome of handling one batch: what to acknowledge, what to report, and whether any is left. */
interface Receipt {
  ack: string[]
  setErrs: PollRequest['setErrs']
  leftPending: boolean
}

/**
 * The background subscriber of the revocation feed (RFC 8936 polling with long polls).
 *
 * It is current when it had an answer less than `stalenessMs` ago and, since it last lost contact or
 * changed streams, a poll answered with nothing more available: only then is the revocation set the
 * server's whole state. The server holds a long poll up to `max_wait_seconds`, which may be longer
 * than the staleness bound; so a long poll is given up after half the bound and followed by an
 * immediate poll, which proves contact without waiting (and loses nothing: unacknowledged events
 * are delivered again).
 */
export function createRevocationFeed(options: RevocationFeedOptions) {
  const stop = new AbortController()
  let lastContact = -Infinity
  let lastContactDate: Date | undefined
  let synced = false
  let eventsReceived = 0
  let running: Promise<void> | undefined
  let firstSync: () => void = () => {}
  const firstSynced = new Promise<void>((resolve) => (firstSync = resolve))

  function contact(): void {
    // Out of contact for longer than the bound: events may have been missed until a poll catches up.
    if (!isFresh()) synced = false
    lastContact = performance.now()
    lastContactDate = new Date()
  }

  function isFresh(): boolean {
    return performance.now() - lastContact <= options.stalenessMs
  }

  /**
   * A SET signed with a key we lack (a rotation) fetches the JWKS at once, unless a fetch made after
   * the SET arrived already missed it: kids from the authenticated feed are trusted, so the floor
   * against made-up kids does not apply.
   */
  async function read(jti: string, jws: unknown, receivedAt: number) {
    try {
      return await readRevocationEvent(jti, jws, options)
    } catch (err) {
      if (!(err instanceof SetKeyUnknownError)) throw err
      if (!(await options.jwks.refetchSince(receivedAt).catch(() => false))) throw err
      return readRevocationEvent(jti, jws, options)
    }
  }

  async function receive(sets: Record<string, unknown>): Promise<Receipt> {
    const receivedAt = performance.now()
    const receipt: Receipt = { ack: [], setErrs: {}, leftPending: false }
    for (const [jti, jws] of Object.entries(sets)) {
      try {
        const revocation = await read(jti, jws, receivedAt)
        if (revocation?.kind === 'kid') {
          // A leaked signing key: dropped now, and the key set fetched again without it.
          await options.jwks.revokeKey(revocation.id, revocation.until)
          eventsReceived++
        } else if (revocation) {
          options.revocations.add(revocation.kind, revocation.id, revocation.until)
          eventsReceived++
        }
        receipt.ack.push(jti)
      } catch (err) {
        if (err instanceof SetKeyUnknownError) receipt.leftPending = true
        else if (err instanceof SetError) {
          options.logger.error(
            { jti, err: err.err, description: err.description },
            'revocation event rejected',
          )
          receipt.setErrs[jti] = { err: err.err, description: err.description }
        } else throw err
      }
    }
    options.revocations.forgetExpired()
    return receipt
  }

  async function run(): Promise<void> {
    let stream: EventStream | undefined
    let receipt: Receipt = { ack: [], setErrs: {}, leftPending: false }
    let immediate = true
    let backoff = MIN_BACKOFF_MS
    let failing = false
    const maxBackoff = Math.min(MAX_BACKOFF_MS, Math.max(MIN_BACKOFF_MS, options.stalenessMs / 2))

    while (!stop.signal.aborted) {
      const longPoll = !immediate && synced
      const timeoutMs = longPoll
        ? Math.min(((stream?.maxWaitSeconds ?? 25) + 2) * 1000, options.stalenessMs / 2)
        : 5_000
      const { signal, clear } = boundedSignal(stop.signal, timeoutMs)
      try {
        if (!stream) {
          stream = await options.client.createStream(signal)
          synced = false
          receipt = { ack: [], setErrs: {}, leftPending: false }
          contact()
        }
        const answer = await options.client.poll(
          stream,
          { ack: receipt.ack, setErrs: receipt.setErrs, maxEvents: MAX_EVENTS, returnImmediately: !longPoll },
          signal,
        )
        clear()
        contact()
        failing = false
        backoff = MIN_BACKOFF_MS
        receipt = await receive(answer.sets)
        if (!answer.moreAvailable && !receipt.leftPending && !synced) {
          synced = true
          firstSync()
        }
        immediate = answer.moreAvailable
        if (receipt.leftPending) {
          // An event we cannot read yet: the revocation set is not the server's state until we can.
          synced = false
          await sleep(MISSING_KEY_RETRY_MS, undefined, { signal: stop.signal })
        }
      } catch (err) {
        clear()
        if (stop.signal.aborted) break
        if (longPoll && signal.aborted) {
          immediate = true // our own bound on a long poll, not a failure
          continue
        }
        if (err instanceof UpstreamError && err.status === 404 && err.error === 'invalid_stream') {
          stream = undefined // expired or forgotten by the server: a new one redelivers the current state
          immediate = true
          continue
        }
        if (!failing) {
          // Wrong credentials need the operator; anything else may pass (the mode switch warns).
          const level = err instanceof UpstreamError && err.status === 401 ? 'error' : 'info'
          options.logger[level](
            { err: err instanceof Error ? err.message : String(err) },
            'revocation feed failed; retrying',
          )
        }
        failing = true
        immediate = true
        await sleep(backoff, undefined, { signal: stop.signal }).catch(() => {})
        backoff = Math.min(backoff * 2, maxBackoff)
      }
    }
  }

  return {
    start(): void {
      running ??= run()
    },

    /** Resolves when the first poll has caught up, or after `timeoutMs`, whichever is first. */
    async waitForFirstSync(timeoutMs: number): Promise<void> {
      await Promise.race([firstSynced, sleep(timeoutMs, undefined, { ref: false })])
    },

    /** Contact within the staleness bound and caught up since contact was last lost. */
    isCurrent(): boolean {
      if (!isFresh()) synced = false
      return synced
    },

    get connected(): boolean {
      return isFresh()
    },

    get lastContact(): Date | undefined {
      return lastContactDate
    },

    get eventsReceived(): number {
      return eventsReceived
    },

    async close(): Promise<void> {
      stop.abort()
      await running
    },
  }
}

export type RevocationFeed = ReturnType<typeof createRevocationFeed>
