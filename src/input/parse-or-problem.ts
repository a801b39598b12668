import type { z } from 'zod'
import { ProblemError } from '../errors.js'

/** Validates input with a zod schema; the first problem becomes a 400 problem+json naming the field. */
export function parseOrProblem<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {})
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  // A strict object's unknown member is named like any other field at fault.
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path
  const message = issue.code === 'unrecognized_keys' ? 'not a field of this request' : issue.message
  const field = path.length > 0 ? path.join('.') : undefined
  throw new ProblemError(400, field ? `${field}: ${message}` : message, field)
}
