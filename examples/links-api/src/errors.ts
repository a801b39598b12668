/**
 * The links API's failures: each a class with a stable `code` (the `error` member of the JSON
 * answer) and its HTTP status, turned into a response in one place (web/error-handler.ts).
 */
export abstract class LinksApiError extends Error {
  abstract readonly code: string
  abstract readonly status: number
  constructor(readonly description: string) {
    super(description)
  }
}

/**
 * 400: the request is malformed or a value breaks a rule; the description names the field. Also
 * 413/415 for a body too large or not JSON, with the same code.
 */
export class InvalidRequestError extends LinksApiError {
  override name = 'InvalidRequestError'
  readonly code = 'invalid_request'
  constructor(
    description: string,
    readonly status = 400,
  ) {
    super(description)
  }
}

/** 404: no such link for this user (another user's link is not theirs to know about). */
export class LinkNotFoundError extends LinksApiError {
  override name = 'LinkNotFoundError'
  readonly code = 'not_found'
  readonly status = 404
  constructor() {
    super('No link with this id.')
  }
}

/** 409: the custom slug belongs to a link already (any user's, in any case). */
export class SlugTakenError extends LinksApiError {
  override name = 'SlugTakenError'
  readonly code = 'slug_taken'
  readonly status = 409
  constructor(slug: string) {
    super(`The slug "${slug}" is taken; choose another or leave slug out for a random one.`)
  }
}

/** 503: the database cannot be reached; the request changed nothing and can be retried. */
export class ServiceUnavailableError extends LinksApiError {
  override name = 'ServiceUnavailableError'
  readonly code = 'temporarily_unavailable'
  readonly status = 503
  constructor() {
    super('The service is temporarily unavailable. Try again shortly.')
  }
}

/** SQLSTATE 23505 from pg or PGlite. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505'
}

/** A database that is down or unreachable: connection errors, SQLSTATE classes 08 and 57P. */
export function isDatabaseDown(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'string' && /^(08|57P0|ECONN|ETIMEDOUT|ENOTFOUND|EAI_AGAIN)/.test(code)) return true
  return (
    err instanceof Error &&
    /Connection terminated|timeout exceeded when trying to connect|PGlite is closed/i.test(err.message)
  )
}
