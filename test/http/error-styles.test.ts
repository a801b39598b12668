import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProblemError } from '../../src/errors.js'
import { trackAllowedMethods } from '../../src/web/allowed-methods.js'
import { errorHandling } from '../../src/web/error-handler.js'
import { answerErrorsAs, routeGroup } from '../../src/web/error-style.js'

/**
 * Each route group declares its error style where it is registered; no path list decides it. The
 * paths below are deliberately ones no style was ever tied to.
 */
let app: FastifyInstance
const failing = async () => {
  throw new ProblemError(400, 'No.')
}

beforeAll(async () => {
  app = Fastify()
  await errorHandling(app, trackAllowedMethods(app, { maxParamLength: 100, ignoreTrailingSlash: false }))
  await app.register(
    routeGroup('oauth', [
      async (oauth) => {
        oauth.post('/anywhere/token', failing)
        // A hook of the group fails before the handler: still the group's style.
        oauth.addHook('onRequest', async (request) => {
          if (request.headers['x-fail'] === 'hook') throw new ProblemError(401, 'Who?')
        })
      },
    ]),
  )
  await app.register(async (api) => {
    answerErrorsAs(api, 'problem', { unservedPaths: ['/things'] })
    api.get('/things/list', failing)
    // A group inside a group: the inner declaration wins for its routes.
    await api.register(
      routeGroup('html', [
        async (pages) => {
          pages.get('/things/page', failing)
        },
      ]),
    )
  })
  await app.ready()
})
afterAll(async () => app.close())

const typeOf = (res: { headers: Record<string, unknown> }) =>
  String(res.headers['content-type']).split(';')[0]

describe('error styles declared by route groups', () => {
  it('a route answers in its group’s style, whatever its path', async () => {
    const oauth = await app.inject({ method: 'POST', url: '/anywhere/token' })
    expect([oauth.statusCode, typeOf(oauth), oauth.json().error]).toEqual([
      400,
      'application/json',
      'invalid_request',
    ])
    const problem = await app.inject({ url: '/things/list' })
    expect([problem.statusCode, typeOf(problem)]).toEqual([400, 'application/problem+json'])
    const page = await app.inject({ url: '/things/page' })
    expect([page.statusCode, typeOf(page)]).toEqual([400, 'text/html'])
  })

  it('so does a failing hook of the group, and a body the group cannot parse', async () => {
    const hook = await app.inject({ method: 'POST', url: '/anywhere/token', headers: { 'x-fail': 'hook' } })
    expect([hook.statusCode, hook.json().error]).toEqual([401, 'invalid_client'])
    expect(hook.headers['www-authenticate']).toMatch(/^Basic/)
    const body = await app.inject({
      method: 'POST',
      url: '/anywhere/token',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    })
    expect([body.statusCode, body.json().error]).toEqual([400, 'invalid_request'])
  })

  it('405 answers in the style of the routes serving the path', async () => {
    const res = await app.inject({ method: 'GET', url: '/anywhere/token' })
    expect([res.statusCode, res.headers.allow, res.json().error]).toEqual([405, 'POST', 'invalid_request'])
  })

  it('404 answers in the style of the group owning the address, else as a page', async () => {
    const owned = await app.inject({ url: '/things/nothing-here' })
    expect([owned.statusCode, typeOf(owned)]).toEqual([404, 'application/problem+json'])
    const prefixItself = await app.inject({ url: '/things' })
    expect(typeOf(prefixItself)).toBe('application/problem+json')
    const lookalike = await app.inject({ url: '/thingsandmore' })
    expect([lookalike.statusCode, typeOf(lookalike)]).toEqual([404, 'text/html'])
    const unowned = await app.inject({ url: '/anywhere/else' })
    expect([unowned.statusCode, typeOf(unowned)]).toEqual([404, 'text/html'])
  })
})
