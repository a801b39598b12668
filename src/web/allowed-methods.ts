import type { FastifyInstance } from 'fastify'
import Router from 'find-my-way'

/**
 * Which methods a path answers to, for RFC 9110 §15.5.6: a path we serve, asked with another method,
 * is 405 Method Not Allowed with an Allow header, not 404. Fastify's router answers only "no route
 * for this method and path", so every route is also recorded here, as it is added, in a router of its
 * own with the same matching rules (find-my-way, which Fastify uses), and asked for the other methods.
 * Call before any route is added.
 */
export function trackAllowedMethods(
  app: FastifyInstance,
  options: { maxParamLength: number; ignoreTrailingSlash: boolean },
): (url: string) => string[] {
  const router = Router(options)
  const declared = new Set<string>()
  const methods = new Set<Router.HTTPMethod>()
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat() as Router.HTTPMethod[]) {
      const key = `${method} ${route.url}`
      if (declared.has(key)) continue
      declared.add(key)
      methods.add(method)
      router.on(method, route.url, () => {})
    }
  })
  return (url) => {
    const path = url.split('?', 1)[0]!
    return [...methods].filter((method) => router.find(method, path) !== null)
  }
}
