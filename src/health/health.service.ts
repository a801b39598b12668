import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { migrationsAreCurrent } from '../db/migrator.js'
import { pingDatabase } from './health.repository.js'

export type Readiness =
  { ready: true } | { ready: false; reason: 'database_unavailable' | 'migrations_pending' }

export function createHealthService(db: Kysely<Database>) {
  // Migrations only move forward while a process runs, so once current they stay current.
  let migrationsCurrent = false
  return {
    async readiness(): Promise<Readiness> {
      try {
        await pingDatabase(db)
        migrationsCurrent ||= await migrationsAreCurrent(db)
      } catch {
        return { ready: false, reason: 'database_unavailable' }
      }
      return migrationsCurrent ? { ready: true } : { ready: false, reason: 'migrations_pending' }
    },
  }
}

export type HealthService = ReturnType<typeof createHealthService>
