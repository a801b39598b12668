import { isResourceIdentifier } from '@linkauth/resource'
import { z } from 'zod'

/** The pieces of an example API's environment schema, each read the same way by every API. */
export const optional = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v))

export const baseUrl = (what: string) =>
  optional.pipe(
    z
      .url({ protocol: /^https?$/, error: `an http(s) URL (${what})` })
      .refine((v) => !v.includes('?') && !v.includes('#'), 'an http(s) URL without query or fragment')
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
  )

export const seconds = (fallback: number, min: number) =>
  z.coerce.number().int().min(min).max(3600).default(fallback)

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback)

export const databaseUrl = optional.pipe(
  z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// connection URL')
    .optional(),
)

export const poolSize = z.coerce.number().int().min(1).max(200).default(10)

export const resourceIdentifier = optional.pipe(
  z
    .string()
    .refine(
      isResourceIdentifier,
      'an absolute https URI (http on a loopback host) without fragment, at most 2048 characters',
    )
    .optional(),
)

export const credentialId = optional.pipe(z.string().min(1).max(200))
export const credentialSecret = optional.pipe(z.string().min(1).max(500))
export const verification = z.enum(['local', 'introspection']).default('local')
export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')
export type LogLevel = z.output<typeof logLevel>

/**
 * Parses the environment with an API's schema. A bad value throws `makeError(message)` naming the
 * variable and the value it got (never a secret's); a missing resource-server credential says how
 * to get one.
 */
export function parseEnvironment<S extends z.ZodObject>(
  schema: S,
  env: Record<string, string | undefined>,
  options: { credentialPrefix: string; howToGetCredentials: string; makeError: (message: string) => Error },
): z.output<S> {
  const result = schema.safeParse(env)
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  const name = String(issue.path[0] ?? 'environment')
  const shown = name.endsWith('SECRET') ? '(hidden)' : JSON.stringify(env[name])
  if (name.startsWith(options.credentialPrefix) && !env[name])
    throw options.makeError(`${name} is not set: ${options.howToGetCredentials}`)
  throw options.makeError(`${name}: ${issue.message} (got ${shown})`)
}
