import { z } from 'zod'
import { ConfigError, count, seconds } from './fields.js'

/** The revocation event feed (RFC 8417 SETs over RFC 8936 polling). */
export const eventSchema = z.object({
  // Below the server's 60 s socket inactivity timeout, which would cut a held poll.
  /** How long a revocation-feed poll is held open when there is nothing to deliver. */
  EVENTS_MAX_WAIT_SECONDS: z.coerce.number().int().min(1).max(50).default(25),
  /** A revocation-feed stream not polled for this long is deleted. */
  EVENT_STREAM_IDLE_SECONDS: seconds(600),
  /** At most this many live (not idle) streams per resource server. */
  EVENT_STREAMS_PER_RESOURCE_SERVER: count(100),
})

export function checkEventSettings(e: z.output<typeof eventSchema>): void {
  if (e.EVENT_STREAM_IDLE_SECONDS < 2 * e.EVENTS_MAX_WAIT_SECONDS) {
    throw new ConfigError(
      'EVENT_STREAM_IDLE_SECONDS: expected at least twice EVENTS_MAX_WAIT_SECONDS (a stream is polled again after each wait)',
    )
  }
}
