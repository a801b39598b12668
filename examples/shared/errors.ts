/**
 * The failures of the example APIs: each a class with a stable `code` and its HTTP status, turned
 * into a response in one place (error-handler.ts), in the answer format each API declares.
 */
export abstract class ApiError extends Error {
  abstract readonly code: string
  abstract readonly status: number
  /** The field the problem is about: a JSON pointer into the body, or a query parameter's name. */
  readonly field: string | undefined = undefined
  constructor(readonly description: string) {
    super(description)
  }
}

/**
 * 400: the request is malformed or a value breaks a rule; the description names the field. Also
 * 413/415 for a body too large or not JSON, with the same code.
 */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError'
  readonly code = 'invalid_request'
  override readonly field: string | undefined
  constructor(
    description: string,
    readonly status = 400,
    field?: string,
  ) {
    super(description)
    this.field = field
  }
}

/** 503: the database cannot be reached; the request changed nothing and can be retried. */
export class ServiceUnavailableError extends ApiError {
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
