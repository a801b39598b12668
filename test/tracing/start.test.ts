import { describe, expect, it } from 'vitest'
import { startTracing, TracingConfigError, tracesExporter } from '../../src/tracing/start.js'

/** When tracing is on (docs/operating.md, "Tracing"): the rule over the standard OTEL_* variables. */
describe('tracing: on only when the environment names an exporter', () => {
  it.each([
    [{}, undefined],
    [{ OTEL_SERVICE_NAME: 'linkauth' }, undefined],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, 'otlp'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, 'otlp'],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, 'otlp'],
    [{ OTEL_TRACES_EXPORTER: 'console' }, 'console'],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, undefined],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, undefined],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }, 'otlp'],
  ])('%o → %s', (env, expected) => {
    expect(tracesExporter(env)).toBe(expected)
  })

  it('an exporter this build does not have is a configuration error, naming those it has', () => {
    expect(() => tracesExporter({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(TracingConfigError)
    expect(() => tracesExporter({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/otlp, console or none/)
  })

  it('off: nothing is started and no tracer provider is registered', async () => {
    expect(await startTracing({}, { serviceName: 'linkauth' })).toBeUndefined()
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')]).toBeUndefined()
  })
})
