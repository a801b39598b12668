import { z } from 'zod'
import { ok, open, type Operations, tooManyParameters } from '../openapi/describe.js'

export const livenessSchema = z.object({ status: z.literal('ok') })
export const readySchema = z.object({ status: z.literal('ready') })
export const notReadySchema = z.object({
  status: z.literal('unavailable'),
  reason: z.enum(['database_unavailable', 'migrations_pending']),
})

/** Open on both listeners: a load balancer or orchestrator asks without credentials. */
export const healthOperations: Operations = {
  '/healthz': {
    get: {
      operationId: 'liveness',
      summary: 'Liveness: the process answers.',
      ...open,
      responses: { '200': ok('Up.', livenessSchema), '400': tooManyParameters },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary: 'Readiness: the database answers and every migration is applied.',
      ...open,
      responses: {
        '200': ok('Ready for traffic.', readySchema),
        '400': tooManyParameters,
        '503': ok('Not ready; `reason` says why.', notReadySchema),
      },
    },
  },
}
