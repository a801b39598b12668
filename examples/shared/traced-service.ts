import { startTracing, TracingConfigError } from '../../src/tracing/start.js'
import type { Service } from './service.js'
import type { ServiceConfig } from './config.js'

/**
 * An example API's entry (its src/main.ts): starts tracing when the OTEL_* variables ask for it
 * (src/tracing/start.ts: OTEL_SERVICE_NAME, else `name`), and only then imports the service and the
 * modules it loads (fastify, pg, the toolkit), so that the instrumentations see them; then runs it.
 */
export async function runTracedService<C extends ServiceConfig, DB>(
  name: string,
  load: () => Promise<Service<C, DB>>,
): Promise<void> {
  let tracing: Awaited<ReturnType<typeof startTracing>>
  try {
    tracing = await startTracing(process.env, { serviceName: name })
  } catch (err) {
    if (!(err instanceof TracingConfigError)) throw err
    process.stderr.write(`${name}: configuration error: ${err.message}\n`)
    process.exit(78) // EX_CONFIG
  }
  const [{ runService }, service] = await Promise.all([import('./service.js'), load()])
  await runService(service, tracing)
}
