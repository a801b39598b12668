import { runTracedService } from '../../shared/traced-service.js'

/** `npm run commerce-api`: tracing first when the OTEL_* variables ask for it, then the commerce API. */
await runTracedService('commerce-api', async () => (await import('./service.js')).service)
