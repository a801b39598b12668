import { connect } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { Browser, PASSWORD, seed } from '../helpers/browser.js'
import { basicAuth, createResourceServer } from '../helpers/tokens.js'

/**
 * Repeated and conflicting headers as they arrive on a real socket (app.inject cannot send them):
 * two Content-Types, two Content-Lengths, Transfer-Encoding with Content-Length, two Authorization
 * or Cookie or CSRF headers, two Hosts. Node's parser and Fastify decide what the request is; either
 * way the answer is a well-formed HTTP response, never a 5xx, always with the security headers.
 */

let t: TestApp
let port: number
let known: { clientId: string; session: string; basic: string; csrf: string }
beforeAll(async () => {
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  const s = await seed(t)
  const rs = await createResourceServer(t)
  const browser = new Browser(t.app)
  await browser.signIn(s.email, PASSWORD)
  const csrf = ((await browser.get('/api/account/apps')).json() as { csrf_token: string }).csrf_token
  known = {
    clientId: s.client.id,
    session: `linkauth_session=${browser.jar.cookies.get('linkauth_session')}`,
    basic: basicAuth(rs.id, rs.secret),
    csrf,
  }
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port)
})
afterAll(async () => t.close())

function send(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // Written, not ended: a client that half-closes its side is taken by Node as gone, and a
    // request still waiting for the database is then dropped unanswered (no client does that).
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let answer = ''
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')))
    socket.on('data', (d) => (answer += d))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

const target = fc.constantFrom<[string, string]>(
  ['POST', '/api/oauth/token'],
  ['POST', '/api/oauth/introspect'],
  ['POST', '/api/oauth/revoke'],
  ['POST', '/login'],
  ['POST', '/oauth/authorize'],
  ['GET', '/api/account/apps'],
  ['DELETE', '/api/account/apps/abcdefghij'],
  ['GET', '/oauth/authorize?client_id=x&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback'],
)

const repeatable = () =>
  fc.constantFrom<[string, string][]>(
    [['Content-Type', 'application/json']],
    [['Content-Type', 'application/x-www-form-urlencoded']],
    [
      ['Content-Type', 'application/json'],
      ['Content-Type', 'application/x-www-form-urlencoded'],
    ],
    [
      ['Authorization', known.basic],
      ['Authorization', 'Basic Zm9vOmJhcg=='],
    ],
    [
      ['Cookie', known.session],
      ['Cookie', 'linkauth_session=forged'],
    ],
    [
      ['X-CSRF-Token', known.csrf],
      ['X-CSRF-Token', 'forged'],
    ],
    [['Host', 'evil.example']],
    [['Transfer-Encoding', 'chunked']],
    [['Transfer-Encoding', 'gzip, chunked']],
    [['Expect', '100-continue']],
    [['X-Forwarded-Host', 'evil.example']],
  )

const rawRequest = fc
  .record({
    target,
    extra: fc.array(fc.constant(null).chain(repeatable), { maxLength: 4 }),
    body: fc.constantFrom(
      `grant_type=refresh_token&refresh_token=x&client_id=${'a'.repeat(10)}`,
      '{"token":"x","client_id":"abcdefghij"}',
      'token=x&token=y',
      '',
    ),
    length: fc.constantFrom('right', 'twice', 'conflicting', 'none', 'short'),
  })
  .map(({ target: [method, path], extra, body, length }) => {
    const lines: [string, string][] = [['Host', '127.0.0.1'], ...extra.flat(), ['Connection', 'close']]
    const chunked = lines.some(([n, v]) => n === 'Transfer-Encoding' && v.endsWith('chunked'))
    const n = Buffer.byteLength(body)
    if (length === 'right') lines.push(['Content-Length', String(n)])
    if (length === 'twice') lines.push(['Content-Length', String(n)], ['Content-Length', String(n)])
    if (length === 'conflicting') lines.push(['Content-Length', String(n)], ['Content-Length', String(n + 1)])
    if (length === 'short') lines.push(['Content-Length', String(Math.max(0, n - 3))])
    const payload = chunked ? `${n.toString(16)}\r\n${body}\r\n0\r\n\r\n` : body
    return `${method} ${path} HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${payload}`
  })

describe('repeated and conflicting headers on a real socket', () => {
  it('always a well-formed answer with the security headers, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(rawRequest, async (request) => {
        // An interim 100 Continue (after Expect: 100-continue) comes first; the final answer follows.
        const answer = (await send(request)).replace(/^(HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '')
        const [head = ''] = answer.split('\r\n\r\n', 1)
        const status = /^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]
        expect(status, request).toBeDefined()
        expect(Number(status), `${request}\n→ ${head}`).toBeLessThan(500)
        expect(head.toLowerCase(), `${request}\n→ ${head}`).toContain('\r\nreferrer-policy: no-referrer')
        const location = /\r\nlocation: ([^\r]*)/i.exec(head)?.[1]
        if (location)
          expect(location, request).toMatch(
            /^(\/login\?|\/oauth\/authorize\/continue\?|https:\/\/app\.example\/callback\?)/,
          )
      }),
      { numRuns: 80 },
    )
  }, 60_000)
})
