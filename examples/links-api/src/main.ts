import { runTracedService } from '../../shared/traced-service.js'

/** `npm run links-api`: tracing first when the OTEL_* variables ask for it, then the links API. */
await runTracedService('links-api', async () => (await import('./service.js')).service)
