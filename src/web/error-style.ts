import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'

/** How a route answers errors: RFC 6749 JSON, RFC 9457 problem+json, or a page for a person. */
export type ErrorStyle = 'oauth' | 'problem' | 'html'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Stamped by answerErrorsAs on every route of the plugin that declared it. */
    errorStyle?: ErrorStyle
  }
  interface FastifyInstance {
    /** Per listener: how a request that no route took answers, by its address. */
    addressErrorStyles: AddressErrorStyles
  }
}

/**
 * How an address answers errors when no route took the request (404, 405, an address the router
 * refuses, a hook failing before the not-found handler): like the routes serving that path with
 * other methods, else like the route group owning the longest path prefix containing it (the
 * prefix itself or below it, as Fastify matches a prefixed plugin), else with a page.
 */
export class AddressErrorStyles {
  readonly #owned = new Map<string, ErrorStyle>()
  constructor(private readonly servedPathStyle: (url: string) => ErrorStyle | undefined) {}

  own(prefix: string, style: ErrorStyle): void {
    this.#owned.set(prefix, style)
  }

  styleOf(url: string): ErrorStyle {
    const served = this.servedPathStyle(url)
    if (served) return served
    const path = url.split('?', 1)[0]!
    let best: { length: number; style: ErrorStyle } | undefined
    for (const [prefix, style] of this.#owned) {
      const contains = path === prefix || path.startsWith(`${prefix}/`)
      if (contains && prefix.length > (best?.length ?? -1)) best = { length: prefix.length, style }
    }
    return best?.style ?? 'html'
  }
}

/** Once per listener, before any route group declares its style. */
export function trackAddressErrorStyles(
  app: FastifyInstance,
  servedPathStyle: (url: string) => ErrorStyle | undefined,
): void {
  app.decorate('addressErrorStyles', new AddressErrorStyles(servedPathStyle))
}

/**
 * Declares how the routes of the plugin it is called in (and of the plugins that plugin registers)
 * answer errors: those of their handlers, hooks, body parsing and rate limits alike. Call it first,
 * before any route is added. `unservedPaths` are the path prefixes the group owns: a request below
 * one that no route serves (404), or whose address the router refuses, answers in this style too.
 */
export function answerErrorsAs(
  app: FastifyInstance,
  style: ErrorStyle,
  options: { unservedPaths?: readonly string[] } = {},
): void {
  // onRoute hooks are encapsulated like everything else: this one sees this plugin's routes only.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, errorStyle: style }
  })
  for (const prefix of options.unservedPaths ?? []) app.addressErrorStyles.own(prefix, style)
}

/** The style of the route that took the request, else that of its address. */
export function errorStyleOf(request: FastifyRequest): ErrorStyle {
  return (
    request.routeOptions.config?.errorStyle ??
    request.server.addressErrorStyles?.styleOf(request.url) ??
    'html'
  )
}

/** One route group: `plugins` registered together in a plugin whose errors answer in `style`. */
export function routeGroup(
  style: ErrorStyle,
  plugins: readonly FastifyPluginAsync[],
  options: { unservedPaths?: readonly string[] } = {},
): FastifyPluginAsync {
  return async (app) => {
    answerErrorsAs(app, style, options)
    for (const plugin of plugins) await app.register(plugin)
  }
}
