import { z } from 'zod'
import { booleanish, optionalString } from './fields.js'

const postgresUrl = optionalString.pipe(
  z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// connection URL')
    .optional(),
)

/** PostgreSQL (unset: the embedded database) and how linkauth connects to it. */
export const databaseSchema = z.object({
  DATABASE_URL: postgresUrl,
  /** Where migrations run: the role that owns the tables; DATABASE_URL (the serving role) when unset. */
  DATABASE_MIGRATION_URL: postgresUrl,
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  // PgBouncer and other transaction-pooling proxies (docs/operating.md): the LISTEN connection's own
  // URL (direct or a session-mode pool), and named prepared statements off where the pooler lacks them.
  /** Where the one LISTEN connection per process goes; DATABASE_URL when unset. */
  DATABASE_LISTEN_URL: postgresUrl,
  /** Named prepared statements (parsed once per connection); false behind a pooler without them. */
  DATABASE_PREPARED_STATEMENTS: booleanish('true'),
})
