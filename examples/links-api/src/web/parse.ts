import type { z } from 'zod'
import { InvalidRequestError } from '../errors.js'

/** Validates input with a zod schema; the first problem becomes a 400 invalid_request naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input)
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  if (issue.code === 'unrecognized_keys')
    throw new InvalidRequestError(
      `unknown parameter${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`,
    )
  const field = issue.path.join('.')
  throw new InvalidRequestError(field ? `${field}: ${issue.message}` : issue.message)
}
