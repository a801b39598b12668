import type { z } from 'zod'
import { ProblemError } from '../errors.js'

/** Validates input with a zod schema; the first problem becomes a 400 problem+json naming the field. */
export function parseOrProblem<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {})
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  const field = issue.path.length > 0 ? issue.path.join('.') : undefined
  throw new ProblemError(400, field ? `${field}: ${issue.message}` : issue.message, field)
}
