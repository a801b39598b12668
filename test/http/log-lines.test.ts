import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createStream, pollRequest } from '../helpers/events.js'
import { createResourceServer, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * What an operator reads in the log at info (issue 40): the revocation feed's long-polls, which
 * come without end, only at debug (an error still at error); a new client and a hand rotation of
 * the signing key, which the audit trail has, in the log too, without secrets.
 */

interface Line {
  level: number
  msg: string
  [field: string]: unknown
}

/** An app logging JSON lines at `level` into an array. */
async function loggingApp(level: string): Promise<{ t: TestApp; lines: Line[] }> {
  const lines: Line[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Line)
      done()
    },
  })
  const t = await buildTestApp({ logDestination: sink, env: { LOG_LEVEL: level } })
  return { t, lines }
}

const requestLinesOf = (lines: Line[], path: string) =>
  lines.filter(
    (l) =>
      (l.msg === 'incoming request' && (l.req as { url: string }).url.endsWith(path)) ||
      (l.msg === 'request completed' &&
        lines.some(
          (i) =>
            i.reqId === l.reqId &&
            i.msg === 'incoming request' &&
            (i.req as { url: string }).url.endsWith(path),
        )),
  )

describe('at LOG_LEVEL=info', () => {
  let t: TestApp
  let lines: Line[]
  let rs: ResourceServerCredentials
  beforeAll(async () => {
    ;({ t, lines } = await loggingApp('info'))
    rs = await createResourceServer(t)
  })
  afterAll(async () => t?.close())

  it('a poll of the revocation feed leaves no line; creating the stream still does', async () => {
    const stream = await createStream(t, rs)
    expect((await pollRequest(t, rs, stream)).statusCode).toBe(200)
    expect(requestLinesOf(lines, '/poll')).toEqual([])
    expect(requestLinesOf(lines, '/api/events/streams').map((l) => [l.level, l.msg])).toEqual([
      [30, 'incoming request'],
      [30, 'request completed'],
    ])
  })

  it('a new client is logged with its id, name, redirect URIs and scopes', async () => {
    const client = await t.services.clients.createClient({
      name: 'Logged App',
      redirect_uris: ['https://logged.example/callback'],
      scopes: ['links:read'],
    })
    const line = lines.find((l) => l.msg === 'client created')
    expect(line).toMatchObject({
      level: 30,
      client_id: client.id,
      name: 'Logged App',
      redirect_uris: ['https://logged.example/callback'],
      scopes: ['links:read'],
    })
  })

  it('a rotation of the signing key by hand is logged with the key ids, nothing of the key', async () => {
    const before = (await t.services.signingKeys.listKeys()).find((k) => !k.retiredAt && !k.pending)
    const fresh = await t.services.signingKeys.rotate()
    const line = lines.find((l) => l.msg === 'signing key rotated')
    expect(line).toMatchObject({
      level: 30,
      kid: fresh.kid,
      alg: fresh.alg,
      retired_kid: before?.kid ?? null,
    })
    expect(JSON.stringify(line)).not.toMatch(/"(d|p|q|dp|dq|qi|k)":/)
  })
})

describe('at LOG_LEVEL=debug', () => {
  let t: TestApp
  let lines: Line[]
  beforeAll(async () => ({ t, lines } = await loggingApp('debug')))
  afterAll(async () => t?.close())

  it("a poll's request lines are there, at debug", async () => {
    const rs = await createResourceServer(t)
    const stream = await createStream(t, rs)
    expect((await pollRequest(t, rs, stream)).statusCode).toBe(200)
    expect(requestLinesOf(lines, '/poll').map((l) => [l.level, l.msg])).toEqual([
      [20, 'incoming request'],
      [20, 'request completed'],
    ])
  })
})
