import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources'
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import type { FastifyRequest } from 'fastify'
import { pathOf, redactedQuery } from './redact.js'
import { TracingConfigError, type TraceExporterName, type Tracing, type TracingOptions } from './start.js'

/**
 * The OpenTelemetry SDK, loaded only when tracing is on (start.ts). W3C trace context and baggage are
 * read from incoming requests and written on outgoing fetches; the sampler and the batch settings come
 * from the standard variables (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG, OTEL_BSP_*), the OTLP
 * exporter's from OTEL_EXPORTER_OTLP_* (http/protobuf).
 */

function processor(env: NodeJS.ProcessEnv, options: SdkOptions): SpanProcessor {
  if (options.exporter) return new SimpleSpanProcessor(options.exporter)
  if (options.exporterName === 'console') return new SimpleSpanProcessor(new ConsoleSpanExporter())
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim()
  if (protocol && protocol !== 'http/protobuf')
    throw new TracingConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: this build exports OTLP over http/protobuf only`,
    )
  return new BatchSpanProcessor(new OTLPTraceExporter())
}

/**
 * A request's span (Fastify's instrumentation): named `METHOD /route`, and its url.path without the
 * query. Hook spans are off: one span per request, one per handler, one per statement and fetch.
 */
function fastifyInstrumentation(): FastifyOtelInstrumentation {
  return new FastifyOtelInstrumentation({
    registerOnInitialization: true,
    instrumentHooks: false,
    // An exception's stack says nothing an operator needs that the log does not, and pg's messages
    // can quote the input: the span's status (error and message) is enough.
    recordExceptions: false,
    requestHook(span, request: FastifyRequest) {
      span.updateName(`${request.method} ${request.routeOptions.url ?? pathOf(request.url)}`)
      span.setAttribute('url.path', pathOf(request.url))
    },
  })
}

/** Outgoing fetches (introspection, JWKS, the event feed): the URL with the query's values redacted. */
function undiciInstrumentation(): UndiciInstrumentation {
  return new UndiciInstrumentation({
    startSpanHook(request) {
      const url = new URL(request.path, request.origin)
      const query = redactedQuery(url.search)
      return { 'url.full': `${url.origin}${url.pathname}${query}`, 'url.query': query }
    },
  })
}

interface SdkOptions extends TracingOptions {
  exporterName: TraceExporterName | undefined
}

export function startSdk(env: NodeJS.ProcessEnv, options: SdkOptions): Tracing {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': options.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }))
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor(env, options)] })
  provider.register()
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      fastifyInstrumentation(),
      // Statement text only, with its $n placeholders: never the values (enhancedDatabaseReporting
      // off), and only inside a traced request (no root spans for the pool's own work).
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      undiciInstrumentation(),
    ],
  })
  return {
    async shutdown() {
      unregister()
      await provider.shutdown()
    },
  }
}
