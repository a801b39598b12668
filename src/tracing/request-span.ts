/** What linkauth says of a request on its span (docs/operating.md, "Tracing"). Never a secret. */
export interface RequestTraceFacts {
  /** The token request's grant type (authorization_code, refresh_token, …). */
  'linkauth.grant_type'?: string
  /** The client's standing: verified, vouched or unverified. */
  'linkauth.client.standing'?: string
  /** `success`, or the OAuth error code of the answer (invalid_grant, access_denied, …). */
  'linkauth.outcome'?: string
}

/** The request's span, when Fastify's instrumentation is loaded (tracing on) and it has one. */
interface Traced {
  opentelemetry?: () => { span?: { setAttributes(attributes: RequestTraceFacts): unknown } | null }
}

/**
 * Sets `facts` on the span of `request` (a FastifyRequest). With tracing off the instrumentation never decorated the
 * request: one property read, and nothing else is done.
 */
export function traceRequest(request: object, facts: RequestTraceFacts): void {
  const otel = (request as Traced).opentelemetry
  if (otel !== undefined) otel.call(request).span?.setAttributes(facts)
}
