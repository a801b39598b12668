import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Clock } from '../lib/clock.js'
import { findPendingEvents, type RevocationEvent } from './event-stream.repository.js'

interface Request {
  streamId: string
  limit: number
  resolve(events: RevocationEvent[]): void
  reject(err: unknown): void
}

/**
 * Looks up a stream's pending events, batching the lookups asked for in one turn of the event loop
 * into one statement: when a notification wakes every held poll of the process at once, they cost
 * one query together instead of one each.
 */
export function createPendingLookup(db: Kysely<Database>, clock: Clock) {
  let batch: Request[] | undefined

  async function run(requests: Request[]): Promise<void> {
    try {
      const limit = Math.max(...requests.map((r) => r.limit))
      const streamIds = [...new Set(requests.map((r) => r.streamId))]
      const pending = await findPendingEvents(db, streamIds, clock.now(), limit)
      for (const r of requests) r.resolve((pending.get(r.streamId) ?? []).slice(0, r.limit))
    } catch (err) {
      for (const r of requests) r.reject(err)
    }
  }

  return (streamId: string, limit: number): Promise<RevocationEvent[]> =>
    new Promise((resolve, reject) => {
      if (!batch) {
        const requests: Request[] = (batch = [])
        setImmediate(() => {
          batch = undefined
          void run(requests)
        })
      }
      batch.push({ streamId, limit, resolve, reject })
    })
}
