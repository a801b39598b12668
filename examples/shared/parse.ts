import type { z } from 'zod'
import { InvalidRequestError } from './errors.js'

/** RFC 6901: a path as a JSON pointer (`/products/3/price`). */
export function jsonPointer(path: readonly PropertyKey[]): string {
  return path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')
}

/**
 * Validates input with a zod schema; the first problem becomes a 400 invalid_request naming the
 * field in its description (`products.3.price: …`) and in `field`: a JSON pointer for a body, the
 * parameter's name for a query string.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where: 'body' | 'query' = 'body',
): z.output<S> {
  const result = schema.safeParse(input)
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  const fieldOf = (path: readonly PropertyKey[]) =>
    path.length === 0 ? undefined : where === 'query' ? String(path[0]) : jsonPointer(path)
  if (issue.code === 'unrecognized_keys')
    throw new InvalidRequestError(
      `unknown parameter${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`,
      400,
      fieldOf([...issue.path, issue.keys[0]!]),
    )
  const field = issue.path.join('.')
  throw new InvalidRequestError(
    field ? `${field}: ${issue.message}` : issue.message,
    400,
    fieldOf(issue.path),
  )
}
