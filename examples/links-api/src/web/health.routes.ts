export { healthRoutes } from '../../../shared/health.routes.js'
