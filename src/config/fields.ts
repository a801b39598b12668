import { z } from 'zod'

// The kinds of value the environment holds, shared by every area's settings.

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback)
export const seconds = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(10 * 365 * 24 * 3600)
    .default(fallback)
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v))
export const secret = (minLength: number) =>
  optionalString.pipe(z.string().min(minLength, `at least ${minLength} characters`).optional())

export const booleanish = (fallback: 'true' | 'false') =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .default(fallback)
    .transform((v) => (v === '' ? fallback === 'true' : v === 'true' || v === '1' || v === 'yes'))

/** A count of requests or failures: 1 to a million. */
export const count = (fallback: number) => z.coerce.number().int().min(1).max(1_000_000).default(fallback)
export const bytes = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback)

export class ConfigError extends Error {
  override name = 'ConfigError'
}
