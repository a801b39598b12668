import type { LightMyRequestResponse } from 'fastify'
import type { TestApp } from './app.js'

/** Retry-After of an answer, as a number of seconds. */
export const retryAfter = (res: LightMyRequestResponse): number => Number(res.headers['retry-after'])

/** linkauth_rate_limited_total for one limit label, as the app's metrics registry counts it. */
export async function rateLimitedCount(t: TestApp, limit: string): Promise<number> {
  const text = await t.services.metrics.registry.getSingleMetricAsString('linkauth_rate_limited_total')
  return Number(new RegExp(`limit="${limit}"} (\\d+)`).exec(text)?.[1] ?? 0)
}
