import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.js'
import type { HousekeepingRun } from './housekeeping.service.js'

function housekeepingRunJson(run: HousekeepingRun) {
  return {
    outcome: run.outcome,
    deleted: run.deleted,
    batches: run.batches,
    duration_seconds: Math.round(run.durationSeconds * 1000) / 1000,
  }
}

/**
 * Admin API: one housekeeping run now, answered when it ends (for an operator after a long pause of
 * the schedule, or a cron job with HOUSEKEEPING_INTERVAL=0). A database failure is a 503 problem.
 */
export function housekeepingAdminRoutes(services: Pick<Services, 'housekeeping'>) {
  return async (app: FastifyInstance) => {
    app.post('/admin/housekeeping/run', async () => housekeepingRunJson(await services.housekeeping.run()))
  }
}
