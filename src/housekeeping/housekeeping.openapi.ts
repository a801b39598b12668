import { z } from 'zod'
import { noAdminToken, ok, problem, type Operations } from '../openapi/describe.js'

const rowCounts = (description: string) => z.record(z.string(), z.number().int().min(0)).meta({ description })

export const housekeepingRunSchema = z.object({
  outcome: z.enum(['completed', 'busy', 'stopped']).meta({
    description:
      'completed: nothing expired is left; busy: another instance is deleting now (it carries on); stopped: the server is stopping.',
  }),
  deleted: rowCounts('Rows deleted, by table.'),
  batches: rowCounts('Batch transactions, by step (each deletes at most HOUSEKEEPING_BATCH_SIZE rows).'),
  duration_seconds: z.number().min(0),
})

export const housekeepingAdminOperations: Operations = {
  '/admin/housekeeping/run': {
    post: {
      operationId: 'runHousekeeping',
      summary: 'Delete expired rows now (what the HOUSEKEEPING_INTERVAL schedule does); answers when done.',
      responses: {
        '200': ok('What the run deleted.', housekeepingRunSchema),
        '401': noAdminToken,
        '503': problem('The database is unreachable; retry after `Retry-After` seconds.'),
      },
    },
  },
}
