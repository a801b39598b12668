import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import { type FlowSecrets, runWholeFlow, type Seen, spellings } from '../helpers/whole-flow.js'

/**
 * DESIGN §5, "Secrets never in logs, URLs or error messages": the whole flow over real HTTP with
 * LOG_LEVEL=trace, then every log line, every Location and every link and form of every page is
 * searched for every secret value the flow used, in every spelling it travels in.
 */

const REDIRECT_URI = 'https://app.example/callback'
const lines: string[] = []
let t: TestApp
let base: string
let flow: { secrets: FlowSecrets; seen: Seen[] }
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  t = await buildTestApp({ env: { LOG_LEVEL: 'trace' }, logDestination: sink })
  base = await t.app.listen({ port: 0, host: '127.0.0.1' })
  const adminBase = await t.admin.listen({ port: 0, host: '127.0.0.1' })
  flow = await runWholeFlow(base, adminBase, TEST_ADMIN_TOKEN)
}, 60_000)
afterAll(async () => t.close())

/** Every secret of the flow and of the configuration, with the name of the first one found in `text`. */
function secretIn(text: string): string | undefined {
  const all: FlowSecrets = {
    ...flow.secrets,
    'cookie secret': t.config.cookieSecret!,
    'key-encryption key': t.config.keyEncryptionKey!,
  }
  for (const [name, secret] of Object.entries(all))
    for (const spelling of spellings(secret)) if (text.includes(spelling)) return `${name} (${spelling})`
  return undefined
}

describe('secrets in logs', () => {
  it('at trace level, no log line holds a code, token, verifier, password, cookie, CSRF token, secret or Authorization header', () => {
    const log = lines.join('')
    // The log did record the flow, at trace level, with the URLs and failures in it.
    expect(t.app.log.level).toBe('trace')
    expect(log).toContain('/api/oauth/token')
    expect(log).toContain('/oauth/authorize/continue')
    expect(log).toContain('"statusCode":401')
    for (const line of lines) expect(secretIn(line), line).toBeUndefined()
  })
})

/** The URLs a page links or posts to. */
function pageUrls(body: string): string[] {
  return [...body.matchAll(/\b(?:href|action|src|formaction)="([^"]*)"/g)].map((m) => m[1]!)
}

describe('secrets in URLs', () => {
  it('no Location we send holds a secret, except the code in the redirect to the application', () => {
    let redirectsWithCode = 0
    for (const answer of flow.seen) {
      const location = answer.headers.get('location')
      if (!location) continue
      if (location.startsWith(`${REDIRECT_URI}?`)) {
        const params = new URL(location).searchParams
        const code = params.get('code')
        if (code) redirectsWithCode++
        params.delete('code')
        expect(secretIn(params.toString()), location).toBeUndefined()
      } else {
        expect(secretIn(location), `${answer.method} ${answer.url} → ${location}`).toBeUndefined()
      }
    }
    expect(redirectsWithCode).toBe(3)
  })

  it('no page links or posts to a URL with a secret in it', () => {
    const pages = flow.seen.filter((a) => a.headers.get('content-type')?.startsWith('text/html'))
    expect(pages.length).toBeGreaterThan(5)
    for (const page of pages)
      for (const url of pageUrls(page.body)) expect(secretIn(url), `${page.url}: ${url}`).toBeUndefined()
  })

  it('no error answer repeats a secret it was sent (a form again carries only its own CSRF field)', () => {
    const errors = flow.seen.filter((a) => a.status >= 400)
    expect(errors.length).toBeGreaterThan(3)
    for (const answer of errors) {
      const body = answer.body.replace(/<input type="hidden" name="csrf_token" value="[^"]*" \/>/g, '')
      expect(secretIn(body), `${answer.method} ${answer.url}`).toBeUndefined()
    }
  })
})

/** A raw request on a socket, for what fetch will not send; the whole answer as text. */
function raw(request: string): Promise<string> {
  const { port } = new URL(base)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(request))
    let answer = ''
    socket.on('data', (d) => (answer += d))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe('Referrer-Policy: no-referrer', () => {
  it('on every answer of the whole flow: pages, redirects, JSON, admin', () => {
    expect(flow.seen.length).toBeGreaterThan(30)
    for (const answer of flow.seen)
      expect(answer.headers.get('referrer-policy'), `${answer.method} ${answer.url} → ${answer.status}`).toBe(
        'no-referrer',
      )
  })

  it.each([
    ['a page that is not there (404)', 'GET', '/nope', undefined, 404],
    ['an API path that is not there (404)', 'GET', '/api/nope', undefined, 404],
    ['an OAuth path that is not there (404)', 'GET', '/api/oauth/nope', undefined, 404],
    ['a method a path does not have (405)', 'PUT', '/api/oauth/token', undefined, 405],
    ['a body over 64 KiB (413)', 'POST', '/api/oauth/token', 'x'.repeat(70_000), 413],
    ['a body over 64 KiB on a page (413)', 'POST', '/login', 'x'.repeat(70_000), 413],
    ['an unsupported content type (415)', 'POST', '/api/oauth/revoke', '<x/>', 415],
    ['a broken authorization request (400 page)', 'GET', '/oauth/authorize?client_id=x', undefined, 400],
    ['a path the router refuses (400)', 'GET', '/account/apps/%E0%A4%A/revoke', undefined, 400],
  ])('on %s', async (_name, method, path, body, status) => {
    const res = await fetch(`${base}${path}`, {
      method,
      ...(body !== undefined
        ? {
            body,
            headers: {
              'content-type':
                path === '/api/oauth/revoke' ? 'application/xml' : 'application/x-www-form-urlencoded',
            },
          }
        : {}),
    })
    expect(res.status).toBe(status)
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it.each([
    ['a malformed request line (400)', 'GET /\u0000 HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    [
      'two different Content-Length headers (400)',
      'POST /api/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      400,
    ],
    ['headers too large (431)', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ])('on a request the HTTP parser refuses: %s', async (_name, request, status) => {
    const answer = await raw(request)
    expect(answer.split('\r\n')[0]).toBe(
      `HTTP/1.1 ${status} ${{ 400: 'Bad Request', 431: 'Request Header Fields Too Large' }[status]}`,
    )
    expect(answer.toLowerCase()).toContain('\r\nreferrer-policy: no-referrer\r\n')
    expect(answer.toLowerCase()).toContain('\r\ncontent-type: application/problem+json')
  })
})
