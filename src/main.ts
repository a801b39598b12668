import { ConfigError } from './config.js'
import { startTracing, TracingConfigError } from './tracing/start.js'

/**
 * The process's entry (`npm start`, `node dist/src/main.js`): tracing first, when the OTEL_* variables
 * ask for it (src/tracing/start.ts), so its instrumentations are in place before serve.ts imports
 * fastify and pg; then the server. With tracing off nothing of OpenTelemetry is loaded.
 */
let tracing: Awaited<ReturnType<typeof startTracing>>
try {
  tracing = await startTracing(process.env, { serviceName: 'linkauth' })
} catch (err) {
  if (!(err instanceof TracingConfigError)) throw err
  const { exitOnConfigError } = await import('./serve.js')
  exitOnConfigError(new ConfigError(err.message))
}
const { serve } = await import('./serve.js')
await serve(tracing)
