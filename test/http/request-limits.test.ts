import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { authorizeUrl, seed } from '../helpers/browser.js'
import { createParty } from '../helpers/fixtures.js'

// Short timeouts so the slow-client tests take seconds; sizes at their defaults (64 KiB body,
// 16 KiB headers). The rate limits are out of the way: these tests are about request shapes.
let t: TestApp
let port: number
beforeAll(async () => {
  t = await buildTestApp({
    env: {
      HEADERS_TIMEOUT: '1',
      REQUEST_TIMEOUT: '2',
      KEEP_ALIVE_TIMEOUT: '1',
      RATE_LIMITS: 'false',
    },
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as { port: number }).port
})
afterAll(async () => t.close())

const form = (fields: [string, string][]) => new URLSearchParams(fields).toString()
/** A POST through app.inject (sizes and parameters are checked before anything needs real HTTP). */
const send = (url: string, contentType: string, payload: string, app = t.app) =>
  app.inject({ method: 'POST', url, headers: { 'content-type': contentType }, payload })
const FORM = 'application/x-www-form-urlencoded'
const many = (n: number) => Array.from({ length: n }, (_, i): [string, string] => [`p${i}`, 'v'])

describe('body size (BODY_LIMIT, 64 KiB)', () => {
  it('an oversized body on the OAuth API → 413 invalid_request JSON', async () => {
    const res = await send(
      '/api/oauth/token',
      FORM,
      `grant_type=refresh_token&refresh_token=${'a'.repeat(65 * 1024)}`,
    )
    expect(res.statusCode).toBe(413)
    expect(res.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The request body is too large.',
    })
  })

  it('an oversized JSON body → 413 JSON as well', async () => {
    const res = await send(
      '/api/oauth/introspect',
      'application/json',
      JSON.stringify({ token: 'a'.repeat(65 * 1024) }),
    )
    expect(res.statusCode).toBe(413)
    expect(res.json().error).toBe('invalid_request')
  })

  it('an oversized sign-in form → 413 page', async () => {
    const res = await send('/login', FORM, `email=a%40example.com&password=${'a'.repeat(65 * 1024)}`)
    expect(res.statusCode).toBe(413)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toContain('The request body is too large.')
    expect(res.body).not.toMatch(/FST_|at .*\.js:\d+/)
  })

  it('BODY_LIMIT sets another limit', async () => {
    const small = await buildTestApp({ database: t.database, env: { BODY_LIMIT: '2048' } })
    try {
      const revoke = (size: number) => send('/api/oauth/revoke', FORM, `token=${'a'.repeat(size)}`, small.app)
      expect((await revoke(1500)).statusCode).toBe(400) // read (no client_id: invalid_request), not refused for size
      expect((await revoke(3000)).statusCode).toBe(413)
    } finally {
      await small.close()
    }
  })
})

describe('parameters: at most 50, each at most 4096 characters', () => {
  it('a token request of 51 form parameters → 400 invalid_request JSON; 50 are read', async () => {
    const token = (fields: [string, string][]) => send('/api/oauth/token', FORM, form(fields))
    const tooMany = await token([['grant_type', 'refresh_token'], ...many(50)])
    expect(tooMany.statusCode).toBe(400)
    expect(tooMany.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The request has more than 50 parameters.',
    })
    const fifty = await token([['grant_type', 'refresh_token'], ...many(49)])
    expect(fifty.json().error_description).toBe('refresh_token is required.')
  })

  it('a repeated parameter counts each time', async () => {
    const res = await send('/api/oauth/revoke', FORM, Array.from({ length: 51 }, () => 'token=x').join('&'))
    expect(res.statusCode).toBe(400)
    expect(res.json().error_description).toBe('The request has more than 50 parameters.')
  })

  it('a JSON body of 51 members → 400 invalid_request', async () => {
    const res = await send(
      '/api/oauth/token',
      'application/json',
      JSON.stringify(Object.fromEntries(many(51))),
    )
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
  })

  it('an authorization request of 51 query parameters → 400 page, never a redirect', async () => {
    const s = await seed(t)
    const url = `${authorizeUrl(s.params)}&${form(many(44))}`
    const res = await t.app.inject({ url })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toContain('The request has more than 50 parameters.')
    expect(res.body).toContain('<code>invalid_request</code>')
    // 50 are fine: the same request one parameter shorter goes on to sign-in.
    expect((await t.app.inject({ url: `${authorizeUrl(s.params)}&${form(many(43))}` })).statusCode).toBe(303)
  })

  it('too many query parameters on the account API → 400 problem+json', async () => {
    const res = await t.app.inject({ url: `/api/account/apps?${form(many(51))}` })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ status: 400, detail: 'The request has more than 50 parameters.' })
  })

  it('a parameter longer than 4096 characters → 400 invalid_request, its value never echoed', async () => {
    const party = await createParty(t)
    const res = await t.app.inject({
      url: `/oauth/authorize?client_id=${party.client.id}&state=${'s'.repeat(5000)}`,
    })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('A parameter is longer than 4096 characters.')
    expect(res.body).not.toContain('ssssssss')
  })
})

/** Sends raw bytes and collects what comes back until the server closes the connection. */
function rawConnection() {
  const socket: Socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (received += chunk))
  socket.on('error', () => {})
  const opened = performance.now()
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => resolve(performance.now() - opened)),
  )
  return { socket, closed, received: () => received }
}

describe('headers (MAX_HEADER_SIZE, 16 KiB)', () => {
  it('headers over the limit → 431 and the connection closes', async () => {
    const { socket, closed, received } = rawConnection()
    socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: big=${'c'.repeat(17 * 1024)}\r\n\r\n`)
    await closed
    expect(received()).toMatch(/^HTTP\/1\.1 431 /)
  })

  it('headers under the limit are served', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, {
      headers: { cookie: `big=${'c'.repeat(12 * 1024)}` },
    })
    expect(res.status).toBe(200)
  })
})

describe('slow clients', () => {
  it('a slowloris (headers trickled a byte at a time) is cut off after HEADERS_TIMEOUT (1 s here)', async () => {
    const { socket, closed } = rawConnection()
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n')
    const trickle = setInterval(() => socket.writable && socket.write('X'), 100)
    try {
      const after = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 5_000))])
      expect(after).toBeGreaterThan(900)
      expect(after).toBeLessThan(3_000)
    } finally {
      clearInterval(trickle)
      socket.destroy()
    }
  })

  it('a body trickled after quick headers is cut off after REQUEST_TIMEOUT (2 s here)', async () => {
    const { socket, closed, received } = rawConnection()
    socket.write(
      'POST /api/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n',
    )
    const trickle = setInterval(() => socket.writable && socket.write('a'), 100)
    try {
      const after = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 6_000))])
      expect(after).toBeGreaterThan(1_900)
      expect(after).toBeLessThan(4_500)
      expect(received()).toMatch(/^HTTP\/1\.1 408 /)
    } finally {
      clearInterval(trickle)
      socket.destroy()
    }
  })

  it('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT (1 s here)', async () => {
    const { socket, closed, received } = rawConnection()
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
    const after = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 5_000))])
    expect(received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(received()).toMatch(/keep-alive: timeout=1/i)
    expect(after).toBeGreaterThan(900)
    expect(after).toBeLessThan(3_000)
  })
})

describe('configuration', () => {
  it('HEADERS_TIMEOUT may not exceed REQUEST_TIMEOUT', async () => {
    await expect(
      buildTestApp({ database: t.database, env: { HEADERS_TIMEOUT: '40', REQUEST_TIMEOUT: '30' } }),
    ).rejects.toThrow('HEADERS_TIMEOUT: expected a value no larger than REQUEST_TIMEOUT')
  })
})
