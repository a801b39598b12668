import { z } from 'zod'
import { LOCALES } from '../web/i18n/locales.js'
import { booleanish, bytes, ConfigError, optionalString, port, secret, seconds } from './fields.js'

/** The process and its two listeners (public and admin): addresses, workers, HTTP limits. */
export const serverSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: port(3000),
  /** Loopback on the embedded database, every interface with DATABASE_URL (loadConfig); set to choose. */
  HOST: optionalString.pipe(z.string().min(1).optional()),
  ISSUER: z
    .url({
      protocol: /^https?$/,
      error: 'an http(s) URL without query or fragment, e.g. https://auth.example.com',
    })
    .refine((v) => !v.includes('?') && !v.includes('#'), 'an http(s) URL without query or fragment')
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
  /** Server processes (node:cluster); 'auto' is one per core. Needs DATABASE_URL when above 1. */
  WORKERS: z
    .union(
      [z.literal('auto'), z.coerce.number().int().min(1).max(64)],
      'a whole number from 1 to 64, or "auto"',
    )
    .default(1),
  DATA_DIR: z.string().min(1).default('./.data'),
  ADMIN_PORT: port(3001),
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_TOKEN: secret(32),
  /** Bearer token for GET /metrics on the public listener; without it the route does not exist there. */
  METRICS_TOKEN: secret(32),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The pages' language when neither the request, the person's choice nor the browser names one we speak. */
  DEFAULT_LOCALE: z.enum(LOCALES).default('en'),
  TRUST_PROXY: booleanish('false'),
  /** Request body limit, bytes. */
  BODY_LIMIT: bytes(64 * 1024, 1024, 10 * 1024 * 1024),
  /** Request line and headers together, bytes; larger → 431. */
  MAX_HEADER_SIZE: bytes(16 * 1024, 4 * 1024, 64 * 1024),
  /** Seconds a client has to send the request headers (slowloris), the whole request, and between keep-alive requests. */
  HEADERS_TIMEOUT: seconds(10),
  REQUEST_TIMEOUT: seconds(30),
  KEEP_ALIVE_TIMEOUT: seconds(5),
})

export function checkServerSettings(e: z.output<typeof serverSchema>): void {
  if (e.HEADERS_TIMEOUT > e.REQUEST_TIMEOUT) {
    throw new ConfigError('HEADERS_TIMEOUT: expected a value no larger than REQUEST_TIMEOUT')
  }
}
