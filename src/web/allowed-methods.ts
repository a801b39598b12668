import type { FastifyInstance, RouteOptions } from 'fastify'
import Router from 'find-my-way'
import type { ErrorStyle } from './error-style.js'

/** The methods another method's request to a served path may use, and how that path answers errors. */
export interface AllowedMethods {
  methods: string[]
  /** The error style of the routes serving the path (answerErrorsAs), when one declared it. */
  style?: ErrorStyle
}

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
): (url: string) => AllowedMethods {
  const router = Router(options)
  const declared = new Set<string>()
  const methods = new Set<Router.HTTPMethod>()
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat() as Router.HTTPMethod[]) {
      const key = `${method} ${route.url}`
      if (declared.has(key)) continue
      declared.add(key)
      methods.add(method)
      // The route's options are kept, not its style: this hook, the listener's, runs before the
      // route group's own onRoute hook stamps the style on them (answerErrorsAs).
      router.on(method, route.url, () => {}, route)
    }
  })
  return (url) => {
    const path = url.split('?', 1)[0]!
    const found = [...methods].flatMap((method) => {
      const match = router.find(method, path)
      return match ? [{ method, route: match.store as RouteOptions }] : []
    })
    return { methods: found.map((f) => f.method), style: found[0]?.route.config?.errorStyle }
  }
}
