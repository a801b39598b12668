import { ApiError } from '../../shared/errors.js'

/**
 * The commerce API's own failures (the general ones, 400 invalid_request and 503, live in
 * examples/shared). Each answers as RFC 9457 problem+json with its `code`, and `field` when the
 * problem is about one value of the request.
 */
export {
  ApiError,
  InvalidRequestError,
  isUniqueViolation,
  ServiceUnavailableError,
} from '../../shared/errors.js'

/** 404: nothing of this user's has this id (another user's things are not theirs to know about). */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError'
  readonly code = 'not_found'
  readonly status = 404
}

/** 409: the custom slug belongs to a link already (any user's, in any case). */
export class SlugTakenError extends ApiError {
  override name = 'SlugTakenError'
  readonly code = 'slug_taken'
  readonly status = 409
  override readonly field = '/slug'
  constructor(slug: string) {
    super(`slug: "${slug}" is taken; choose another or leave slug out for a random one.`)
  }
}

/** 409: a conversion for this order id was reported already, with other values. */
export class ConversionConflictError extends ApiError {
  override name = 'ConversionConflictError'
  readonly code = 'conversion_conflict'
  readonly status = 409
  override readonly field = '/order_id'
  constructor(orderId: string, differs: string[]) {
    super(
      `order_id: a conversion for order "${orderId}" was reported already with another ${differs.join(', ')}; an order converts once.`,
    )
  }
}

/** 422: the request is well formed but names something that is not there (a click, a product). */
export class UnprocessableError extends ApiError {
  override name = 'UnprocessableError'
  readonly status = 422
  override readonly field: string
  constructor(
    readonly code: string,
    field: string,
    description: string,
  ) {
    super(description)
    this.field = field
  }
}

/** 409: the sync run was completed already: it takes no more batches. */
export class SyncRunClosedError extends ApiError {
  override name = 'SyncRunClosedError'
  readonly code = 'sync_run_completed'
  readonly status = 409
  override readonly field = '/sync_run_id'
  constructor() {
    super('sync_run_id: this sync run is completed; start a new one for another full sync.')
  }
}
