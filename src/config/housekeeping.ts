import { z } from 'zod'
import { seconds } from './fields.js'

/** Deleting expired rows: how often, in batches of how many, and how long some rows are kept. */
export const housekeepingSchema = z.object({
  // Housekeeping (docs/operating.md): seconds between runs, 0 for none; rows per batch; how long a
  // refresh family is kept after its revocation or expiry, so that a replay is still recognised.
  HOUSEKEEPING_INTERVAL: z.coerce.number().int().min(0).max(86_400).default(300),
  HOUSEKEEPING_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  HOUSEKEEPING_REPLAY_HORIZON: z.coerce
    .number()
    .int()
    .min(0)
    .max(10 * 365 * 24 * 3600)
    .default(7 * 24 * 3600),
  /** Audit trail: rows older than this many seconds (default 400 days) are deleted by housekeeping. */
  AUDIT_RETENTION: seconds(400 * 24 * 3600),
})
