import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { redactedQuery } from './redact.js'

const tracer = trace.getTracer('linkauth')

/**
 * A GET that is not made with fetch (the metadata document's SSRF-safe request, over node:https) as
 * a client span like the undici instrumentation's: the URL with its query's values redacted. With
 * tracing off the API's tracer is a no-op. The trace context is not sent to the host: it is anyone's.
 */
export function tracedGet<T>(url: URL, run: () => Promise<T>): Promise<T> {
  const attributes = {
    'http.request.method': 'GET',
    'url.full': `${url.origin}${url.pathname}${redactedQuery(url.search)}`,
    'server.address': url.hostname,
  }
  return tracer.startActiveSpan('GET', { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await run()
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : 'failed' })
      throw err
    } finally {
      span.end()
    }
  })
}
