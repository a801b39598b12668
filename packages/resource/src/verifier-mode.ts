/**
 * Which way a local-mode verifier checks tokens right now: locally while the revocation feed is
 * current, by introspection ('fallback') while it is stale. A change is logged when it happens (a
 * timer looks), not only when a request comes.
 */
import type { ResourceLogger } from './logger.js'
import type { RevocationFeed } from './revocation-feed.js'

export type VerifierMode = 'local' | 'introspection' | 'fallback'

/** How long creation waits for the feed to deliver the current revocation state before serving. */
const FIRST_SYNC_WAIT_MS = 5_000

export interface ModeWatch {
  /** The mode now (logging a change since the last look). */
  current(): VerifierMode
  /** Stops the timer. */
  stop(): void
}

/**
 * Starts the feed, when there is one, and waits briefly for its first sync; then looks at the mode
 * regularly (every quarter of the staleness limit, at most every second) so a change is logged.
 */
export async function watchMode(deps: {
  mode: 'local' | 'introspection'
  feed: RevocationFeed | undefined
  logger: ResourceLogger
  stalenessMs: number
}): Promise<ModeWatch> {
  const { mode, feed, logger, stalenessMs } = deps
  let reported: VerifierMode = mode
  function currentMode(): VerifierMode {
    if (mode === 'introspection' || !feed) return mode
    const current: VerifierMode = feed.isCurrent() ? 'local' : 'fallback'
    if (current !== reported) {
      if (current === 'fallback')
        logger.warn(
          {
            lastFeedContact: feed.lastContact?.toISOString() ?? null,
            maxFeedStalenessSeconds: stalenessMs / 1000,
          },
          'revocation feed is not current: checking every access token by introspection',
        )
      else logger.info({}, 'revocation feed is current again: verifying access tokens locally')
      reported = current
    }
    return current
  }

  let watch: NodeJS.Timeout | undefined
  if (feed) {
    feed.start()
    await feed.waitForFirstSync(FIRST_SYNC_WAIT_MS)
    currentMode()
    watch = setInterval(currentMode, Math.min(1000, stalenessMs / 4)).unref()
  }
  return { current: currentMode, stop: () => clearInterval(watch) }
}
