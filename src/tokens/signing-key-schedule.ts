import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { type AuditRecorder, SYSTEM } from '../audit/audit.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { JWKS_MAX_AGE_SECONDS } from './jwks.js'
import type { SigningKeyMaker } from './signing-key-maker.js'
import {
  activatePendingSigningKey,
  findActiveSigningKey,
  findPendingSigningKey,
  inSigningKeyLock,
  insertPendingSigningKey,
  retireActiveSigningKey,
  type StoredSigningKey,
} from './signing-key.repository.js'
import { PUBLISH_MARGIN_SECONDS } from './verification-key.js'

/** The least time a scheduled key is published before it signs: a JWKS cache lifetime, a poll, a margin. */
const MIN_LEAD_SECONDS = JWKS_MAX_AGE_SECONDS + 5 + PUBLISH_MARGIN_SECONDS

/**
 * How long before its time the schedule makes (and publishes) the next key: half the rotation period,
 * at most a day, never less than MIN_LEAD_SECONDS. A day gives resource servers that cache the JWKS
 * far longer than they are told every chance to have the key before its first token.
 */
export function nextKeyLeadSeconds(rotationSeconds: number): number {
  return Math.max(MIN_LEAD_SECONDS, Math.min(rotationSeconds / 2, 24 * 3600))
}

/** What one run of the schedule did; busy: another instance held the lock. */
export interface ScheduleRun {
  outcome: 'done' | 'busy'
  /** The key made and published ahead of its use, and when it will sign. */
  prepared?: { kid: string; activatesAt: Date }
  /** The pending key that became the active one. */
  activated?: string
}

export interface SigningKeyScheduleDeps {
  db: Kysely<Database>
  clock: Clock
  config: Pick<Config, 'signingKeyRotation'>
  logger: Logger
  audit: AuditRecorder
  maker: SigningKeyMaker
  /** Reads the key set again after a change. */
  reload: () => Promise<void>
}

/**
 * One run of the rotation schedule (SIGNING_KEY_ROTATION): a due pending key becomes the active one,
 * and the next key is made and published ahead of its time. Every instance runs it; the signing-key
 * lock lets one act at a time and the others answer busy.
 */
export async function runSigningKeySchedule(deps: SigningKeyScheduleDeps): Promise<ScheduleRun> {
  const { db, clock, logger, audit, maker } = deps
  const now = clock.now()
  const rotation = deps.config.signingKeyRotation
  // Kept across a retry of the transaction (a serialization conflict): one key made per run at most.
  let fresh: StoredSigningKey | undefined
  const result = await inSigningKeyLock(
    db,
    async (trx) => {
      const run: ScheduleRun = { outcome: 'done' }
      let pending = await findPendingSigningKey(trx)
      if (pending && pending.activatesAt <= now) {
        const retired = await retireActiveSigningKey(trx, pending.activatesAt)
        await activatePendingSigningKey(trx, pending.kid, pending.activatesAt)
        await audit.record(trx, {
          type: 'signing_key.rotated',
          actor: SYSTEM,
          target: { kind: 'signing_key', id: pending.kid },
          details: {
            alg: pending.alg,
            retired_kid: retired ?? null,
            scheduled: true,
            activates_at: pending.activatesAt.toISOString(),
          },
        })
        run.activated = pending.kid
        pending = undefined
      }
      const current = await findActiveSigningKey(trx)
      if (rotation > 0 && !pending && current) {
        const due = addSeconds(current.activatesAt, rotation)
        const lead = nextKeyLeadSeconds(rotation)
        if (now.getTime() >= due.getTime() - lead * 1000) {
          const activatesAt = new Date(Math.max(due.getTime(), addSeconds(now, lead).getTime()))
          fresh ??= maker.newStoredKey()
          await insertPendingSigningKey(trx, fresh, activatesAt)
          await audit.record(trx, {
            type: 'signing_key.prepared',
            actor: SYSTEM,
            target: { kind: 'signing_key', id: fresh.kid },
            details: { alg: fresh.alg, activates_at: activatesAt.toISOString() },
          })
          run.prepared = { kid: fresh.kid, activatesAt }
        }
      }
      return run
    },
    { wait: false },
  )
  if (!result) return { outcome: 'busy' }
  if (result.prepared || result.activated) {
    logger.info(
      {
        prepared: result.prepared && {
          kid: result.prepared.kid,
          activatesAt: result.prepared.activatesAt.toISOString(),
        },
        activated: result.activated,
      },
      'signing key schedule',
    )
    await deps.reload()
  }
  return result
}
