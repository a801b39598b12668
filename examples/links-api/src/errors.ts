/**
 * The links API's failures: each a class with a stable `code` (the `error` member of the JSON
 * answer) and its HTTP status, turned into a response in one place (the error handler of
 * examples/shared, which both example APIs use). The general ones live there too.
 */
import { ApiError as LinksApiError } from '../../shared/errors.js'

export { LinksApiError }
export {
  InvalidRequestError,
  isDatabaseDown,
  isUniqueViolation,
  ServiceUnavailableError,
} from '../../shared/errors.js'

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
