import { noAdminToken, type Operations } from '../openapi/describe.js'

/** GET /metrics on the admin listener, behind the admin token like the rest of it. */
export const adminMetricsOperations: Operations = {
  '/metrics': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics of the server (every worker’s when WORKERS > 1).',
      responses: {
        '200': {
          description: 'The Prometheus text exposition format (version 0.0.4).',
          content: { 'text/plain': {} },
        },
        '401': noAdminToken,
      },
    },
  },
}
