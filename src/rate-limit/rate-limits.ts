import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { RateLimitedError } from '../errors.js'
import type { Metrics } from '../metrics/metrics.js'
import { formField } from '../input/form-field.js'
import { readBasicAuthorization } from '../web/basic-auth.js'
import { isCallerIdShape } from '../lib/identifiers.js'
import { clientAddress } from './client-address.js'
import type { Count, CounterStore } from './counter-store.js'

const MINUTE = 60_000

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
type Limiter = ReturnType<FastifyInstance['createRateLimit']>

/** @fastify/rate-limit's store protocol over our CounterStore (one store for every limit; keys name the limit). */
function pluginStore(store: CounterStore): FastifyRateLimitStoreCtor {
  type Done = (err: Error | null, result?: { current: number; ttl: number }) => void
  const settle = (counted: Promise<Count>, done: Done) =>
    void counted.then(
      (c) => done(null, { current: c.count, ttl: c.resetInMs }),
      (err: Error) => done(err),
    )
  const adapter = {
    incr: (key: string, done: Done, windowMs: number) => settle(store.increment(key, windowMs), done),
    read: (key: string, done: Done) => settle(store.peek(key), done),
    child: () => adapter,
  }
  // The plugin calls `new Store(options)`; a constructor returning an object yields that object.
  return function PluginStore() {
    return adapter
  } as unknown as FastifyRateLimitStoreCtor
}

/** The client a token or revocation request names: the HTTP Basic user-id (a public client's has an empty password), else the body's client_id. */
function callerFrom(request: FastifyRequest): string | undefined {
  const basic = readBasicAuthorization(request.headers.authorization)
  const id = (typeof basic === 'object' ? basic.id : undefined) ?? formField(request.body, 'client_id')
  return id !== undefined && isCallerIdShape(id) ? id : undefined
}

type HookName = 'onRequest' | 'preHandler' | 'onResponse'

function addRouteHook(route: RouteOptions, name: HookName, hook: Hook) {
  const existing = route[name] as Hook | Hook[] | undefined
  route[name] = (existing === undefined ? [] : [existing].flat()).concat(hook) as never
}

/**
 * Every request rate limit of the public listener, in one table (docs/operating.md, "Rate limits").
 * Sign-in failures per account are counted by the sign-in throttle, in the same store.
 *
 * - POST /login: SIGN_IN_RATE_LIMIT per address per minute, every attempt (argon2 is expensive);
 *   POST /account/password and /account/reset-password count in the same budget.
 * - GET/POST /oauth/authorize and its continuation: AUTHORIZE_RATE_LIMIT per address per minute.
 * - token, revocation, introspection, the revocation event feed: a quota per (caller, address) per minute. The caller is the
 *   client_id (public, so not a credential: keyed with the address, nobody can spend another's
 *   quota) or the resource-server id. Requests naming no caller (whatever their answer: 400, 413,
 *   415, …), and requests whose caller fails authentication (401), count against
 *   UNIDENTIFIED_RATE_LIMIT per address; once that is spent, every token and revocation request
 *   from the address waits, so neither garbage nor made-up client ids buy fresh quota.
 * - introspection and the feed authenticate first (`resourceServerOf`, before the body is read): a
 *   resource server with valid credentials is held to its own quota only, never to its address's,
 *   so garbage from the same address (a shared proxy, the API's own host) cannot take it offline.
 */
export function rateLimits(
  deps: {
    store: CounterStore
    metrics: Pick<Metrics, 'rateLimited'>
    /** The resource server whose valid HTTP Basic credentials these are, else undefined (never throws). */
    resourceServerOf: (authorization: string | undefined) => Promise<string | undefined>
  },
  config: Pick<
    Config,
    | 'rateLimits'
    | 'signInRateLimit'
    | 'authorizeRateLimit'
    | 'tokenRateLimit'
    | 'revocationRateLimit'
    | 'introspectionRateLimit'
    | 'unidentifiedRateLimit'
  >,
) {
  return fp(async (app: FastifyInstance) => {
    if (!config.rateLimits) return
    await app.register(rateLimit, {
      global: false,
      store: pluginStore(deps.store),
      // Retry-After comes with the 429 itself (the error handler); no X-RateLimit-* on every answer.
      addHeaders: {
        'x-ratelimit-limit': false,
        'x-ratelimit-remaining': false,
        'x-ratelimit-reset': false,
        'retry-after': false,
      },
      addHeadersOnExceeding: {
        'x-ratelimit-limit': false,
        'x-ratelimit-remaining': false,
        'x-ratelimit-reset': false,
      },
    })

    const refuse = (limit: string, retryAfterMs: number) => {
      deps.metrics.rateLimited.inc({ limit })
      return new RateLimitedError(limit, retryAfterMs)
    }
    const perAddress = (limit: string, max: number): Hook =>
      app.rateLimit({
        max,
        timeWindow: MINUTE,
        keyGenerator: (request) => `${limit}:${clientAddress(request)}`,
        errorResponseBuilder: (_request, context) => refuse(limit, context.ttl),
      })

    /** Counts the request; refuses it once the limit is passed. */
    const hit = async (limiter: Limiter, request: FastifyRequest, limit: string) => {
      const result = await limiter(request)
      if (!result.isAllowed && result.isExceeded) throw refuse(limit, result.ttl)
    }
    /** Refuses the request, without counting it, when the limit is spent. */
    const spent = async (limiter: Limiter, request: FastifyRequest, limit: string) => {
      const result = await limiter(request, { increment: false })
      if (!result.isAllowed && result.remaining === 0) throw refuse(limit, result.ttl)
    }

    const unidentified = app.createRateLimit({
      max: config.unidentifiedRateLimit,
      timeWindow: MINUTE,
      keyGenerator: (request) => `oauth_unidentified:${clientAddress(request)}`,
    })
    const perCaller = (limit: string, max: number) => {
      const limiter = app.createRateLimit({
        max,
        timeWindow: MINUTE,
        keyGenerator: (request) => `${limit}:${callerFrom(request)}@${clientAddress(request)}`,
      })
      return {
        // Before the body is read (cheap): an address that spent its unidentified quota waits.
        onRequest: (request: FastifyRequest) => spent(unidentified, request, 'oauth_unidentified'),
        preHandler: async (request: FastifyRequest) => {
          if (callerFrom(request) !== undefined) await hit(limiter, request, limit)
        },
        // Whatever the answer (400, 401, 413, 415, …), a request that named no valid caller, or
        // whose caller failed authentication, counts against its address.
        onResponse: async (request: FastifyRequest, reply: FastifyReply) => {
          const status = reply.statusCode
          if (status !== 429 && (status === 401 || callerFrom(request) === undefined))
            await unidentified(request)
        },
      }
    }

    /** Introspection and the feed: authenticated callers count against their own quota only. */
    const perResourceServer = (limit: string, max: number) => {
      const callers = new WeakMap<FastifyRequest, string | undefined>()
      const limiter = app.createRateLimit({
        max,
        timeWindow: MINUTE,
        keyGenerator: (request) => `${limit}:${callers.get(request)}@${clientAddress(request)}`,
      })
      return {
        onRequest: async (request: FastifyRequest) => {
          const caller = await deps.resourceServerOf(request.headers.authorization)
          callers.set(request, caller)
          if (caller !== undefined) await hit(limiter, request, limit)
          else await spent(unidentified, request, 'oauth_unidentified')
        },
        onResponse: async (request: FastifyRequest, reply: FastifyReply) => {
          const status = reply.statusCode
          if (status !== 429 && (status === 401 || callers.get(request) === undefined))
            await unidentified(request)
        },
      }
    }

    const authorize = perAddress('authorize', config.authorizeRateLimit)
    // The revocation feed authenticates resource servers as introspection does, so it is limited
    // the same way (its own count, the same maximum): stream creation and polls together.
    const eventFeed = perResourceServer('event_feed', config.introspectionRateLimit)
    // The password forms cost argon2 like sign-in, and share its count per address.
    const signIn = perAddress('sign_in', config.signInRateLimit)
    // Each passkey challenge is a row: handed out at the authorize endpoint's pace, on a count of its own.
    const passkeyOptions = perAddress('passkey_options', config.authorizeRateLimit)
    const rules: Record<string, Partial<Record<HookName, Hook>>> = {
      'POST /login': { onRequest: signIn },
      'POST /login/passkey': { onRequest: signIn },
      'POST /account/passkeys/confirm': { onRequest: signIn },
      'POST /api/passkeys/sign-in-options': { onRequest: passkeyOptions },
      'POST /api/passkeys/reset-options': { onRequest: passkeyOptions },
      'POST /api/account/passkeys/options': { onRequest: passkeyOptions },
      'POST /api/account/passkeys/confirm-options': { onRequest: passkeyOptions },
      'POST /account/password': { onRequest: signIn },
      'POST /account/reset-password': { onRequest: signIn },
      'GET /oauth/authorize': { onRequest: authorize },
      'GET /oauth/authorize/continue': { onRequest: authorize },
      'POST /oauth/authorize': { onRequest: authorize },
      // A pushed request is the first half of an authorization: it counts as one, per address.
      'POST /api/oauth/par': { onRequest: authorize },
      // RFC 8628: each device request is a row; the user-code page throttles wrong codes on its own too.
      'POST /api/oauth/device_authorization': { onRequest: authorize },
      'POST /device': { onRequest: authorize },
      'POST /device/confirm': { onRequest: authorize },
      'POST /api/oauth/token': perCaller('token', config.tokenRateLimit),
      'POST /api/oauth/revoke': perCaller('revocation', config.revocationRateLimit),
      'POST /api/oauth/introspect': perResourceServer('introspection', config.introspectionRateLimit),
      'POST /api/events/streams': eventFeed,
      'POST /api/events/streams/:stream_id/poll': eventFeed,
    }
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        const rule = rules[`${method === 'HEAD' ? 'GET' : method} ${route.url}`]
        for (const [name, hook] of Object.entries(rule ?? {})) addRouteHook(route, name as HookName, hook)
      }
    })
  })
}
