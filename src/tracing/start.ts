import type { SpanExporter } from '@opentelemetry/sdk-trace-base'

/**
 * OpenTelemetry tracing (docs/operating.md, "Tracing"): off unless the environment names where spans
 * go, and then free of cost when off: this module imports nothing of OpenTelemetry at run time (the
 * import above is a type, erased), so with tracing off no SDK is loaded, no module is patched and no
 * request does any tracing work.
 *
 * On when OTEL_SDK_DISABLED is not `true` and either OTEL_TRACES_EXPORTER names an exporter other than
 * `none`, or OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (then OTLP). The
 * OTel specification's default exporter is `otlp`; linkauth's default is off, so a server never sends
 * spans to a collector nobody asked for.
 */

/** A setting of the OTEL_* variables that cannot work: the server does not start (exit 78). */
export class TracingConfigError extends Error {
  override name = 'TracingConfigError'
}

/** The exporters this build can run (OTEL_TRACES_EXPORTER). */
export const TRACE_EXPORTERS = ['otlp', 'console'] as const
export type TraceExporterName = (typeof TRACE_EXPORTERS)[number]

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== ''

/** The exporter the environment asks for, or undefined: tracing off. */
export function tracesExporter(env: NodeJS.ProcessEnv): TraceExporterName | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined
  const named = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase()
  if (set(named)) {
    const names = named.split(',').map((n) => n.trim())
    if (names.includes('none')) return undefined
    if (names.length > 1 || !(TRACE_EXPORTERS as readonly string[]).includes(names[0]!))
      throw new TracingConfigError(
        `OTEL_TRACES_EXPORTER=${named}: one of ${TRACE_EXPORTERS.join(', ')} or none is supported`,
      )
    return names[0] as TraceExporterName
  }
  return set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_ENDPOINT)
    ? 'otlp'
    : undefined
}

/** Tracing that was started: flush and stop it before the process exits. */
export interface Tracing {
  shutdown(): Promise<void>
}

export interface TracingOptions {
  /** service.name when OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) does not set one. */
  serviceName: string
  /** Tests and the bench: spans go here, unbatched, whatever the environment says. */
  exporter?: SpanExporter
}

/**
 * Starts tracing when the environment (or `options.exporter`) asks for it; resolves to undefined,
 * having loaded nothing, when it does not. Call it before anything imports fastify or pg: the entry
 * points (src/main.ts, the example APIs' mains) await it, then import the server dynamically.
 */
export async function startTracing(
  env: NodeJS.ProcessEnv,
  options: TracingOptions,
): Promise<Tracing | undefined> {
  const exporter = options.exporter ? undefined : tracesExporter(env)
  if (!options.exporter && exporter === undefined) return undefined
  const { startSdk } = await import('./sdk.js')
  return startSdk(env, { ...options, exporterName: exporter })
}
