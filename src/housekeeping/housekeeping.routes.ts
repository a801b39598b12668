import type { FastifyInstance } from 'fastify'
import type { HousekeepingRun, HousekeepingService } from './housekeeping.service.js'

function housekeepingRunJson(run: HousekeepingRun) {
  return {
    outcome: run.outcome,
    deleted: run.deleted,
    batches: run.batches,
    duration_seconds: Math.round(run.durationSeconds * 1000) / 1000,
  }
}

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface HousekeepingRouteServices {
  housekeeping: HousekeepingService
}

/**
 * Admin API: one housekeeping run now, answered when it ends (for an operator after a long pause of
 * the schedule, or a cron job with HOUSEKEEPING_INTERVAL=0). A database failure is a 503 problem.
 */
export function housekeepingAdminRoutes(services: HousekeepingRouteServices) {
  return async (app: FastifyInstance) => {
    app.post('/admin/housekeeping/run', async () => housekeepingRunJson(await services.housekeeping.run()))
  }
}
