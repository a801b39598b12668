import { context, propagation, SpanKind, SpanStatusCode, trace, type TextMapGetter } from '@opentelemetry/api'

/** The W3C trace context keys of a request's `_meta` (MCP 2026-07-28, SEP-414): unprefixed. */
type Meta = Record<string, unknown>

const metaGetter: TextMapGetter<Meta> = {
  keys: (meta) => Object.keys(meta),
  get: (meta, key) => {
    const value = meta[key]
    return typeof value === 'string' ? value : undefined
  },
}

const tracer = trace.getTracer('links-api.mcp')

/**
 * One tools/call as a span (`tools/call NAME`), a child of the caller's span named by the request's
 * `_meta.traceparent` (and `tracestate`, `baggage`), else of the HTTP request's span, so an agent's
 * tool call, this API and linkauth's introspection are one trace. Only the tool's name is recorded,
 * never its arguments. With tracing off (no SDK registered) the span is a no-op.
 */
export function tracedToolCall<T extends { isError?: boolean | undefined }>(
  name: string,
  meta: Meta | undefined,
  run: () => Promise<T>,
): Promise<T> {
  const parent =
    meta !== undefined && typeof meta.traceparent === 'string'
      ? propagation.extract(context.active(), meta, metaGetter)
      : context.active()
  return tracer.startActiveSpan(
    `tools/call ${name}`,
    { kind: SpanKind.SERVER, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': name } },
    parent,
    async (span) => {
      try {
        const result = await run()
        if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR })
        return result
      } finally {
        span.end()
      }
    },
  )
}
