import type { Logger } from 'pino'
import type { Listen, StopListening } from '../db/notifications.js'
import { KeyEncryptionKeyMissingError } from './key-encryption.js'
import { SIGNING_KEYS_CHANNEL } from './signing-key.repository.js'

/** A failed poll or notified sync, told to the operator (a key that cannot be decrypted louder). */
export function reportSyncFailure(logger: Logger, err: unknown): void {
  if (err instanceof KeyEncryptionKeyMissingError)
    logger.error({ err: err.message }, 'a signing key cannot be decrypted; signing with the keys in memory')
  else logger.warn({ err }, 'signing key poll failed')
}

/**
 * Runs `sync` every poll interval and at each notification on the signing keys' channel (and when
 * the listener starts); a listener that cannot start or is lost leaves the poll alone. Returns what
 * stops both, and waits for a sync already under way: once it resolves, no sync of this watch runs
 * or lands any more (one in flight could otherwise read a change made after the stop).
 */
export function watchSigningKeys(deps: {
  sync: () => Promise<void>
  logger: Logger
  listen?: Listen | undefined
  pollIntervalMs: number
}): () => Promise<void> {
  const { sync, logger, pollIntervalMs } = deps
  const report = (err: unknown) => reportSyncFailure(logger, err)
  const running = new Set<Promise<void>>()
  let ended = false
  const run = () => {
    if (ended) return
    const done: Promise<void> = sync()
      .catch(report)
      .finally(() => running.delete(done))
    running.add(done)
  }
  let timer: NodeJS.Timeout | undefined = setInterval(run, pollIntervalMs)
  timer.unref()
  let stopListening: Promise<StopListening | undefined> | undefined = deps
    .listen?.(SIGNING_KEYS_CHANNEL, {
      notify: run,
      listening: run,
      lost: (err) => logger.warn({ err, pollIntervalMs }, 'signing key listener lost; polling meanwhile'),
    })
    .catch((err: unknown) => {
      logger.warn({ err }, 'signing key listener not started; polling only')
      return undefined
    })
  return async () => {
    ended = true
    if (timer) clearInterval(timer)
    timer = undefined
    const stopped = stopListening
    stopListening = undefined
    await (
      await stopped
    )?.()
    await Promise.all(running)
  }
}
