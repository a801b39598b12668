// The links API answers errors as {error, error_description} (the shared handler's default format).
export { errorHandling, sendError } from '../../../shared/error-handler.js'
