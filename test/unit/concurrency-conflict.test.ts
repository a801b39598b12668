import { Writable } from 'node:stream'
import Fastify, { type FastifyBaseLogger } from 'fastify'
import { describe, expect, it } from 'vitest'
import { isConcurrencyConflict, retryOnConcurrencyConflict } from '../../src/db/errors.js'
import { createLogger } from '../../src/logger.js'
import { errorHandling } from '../../src/web/error-handler.js'
import { answerErrorsAs } from '../../src/web/error-style.js'

const conflict = (code: string) => Object.assign(new Error('deadlock detected'), { code })

describe('statements aborted by a concurrency conflict', () => {
  it('recognises deadlock_detected and serialization_failure only', () => {
    expect(isConcurrencyConflict(conflict('40P01'))).toBe(true)
    expect(isConcurrencyConflict(conflict('40001'))).toBe(true)
    expect(isConcurrencyConflict(conflict('23505'))).toBe(false)
    expect(isConcurrencyConflict(new Error('x'))).toBe(false)
  })

  it('runs the statement again after a deadlock, at most three times in all', async () => {
    let calls = 0
    await expect(
      retryOnConcurrencyConflict(async () => {
        if (++calls < 3) throw conflict('40P01')
        return 'done'
      }),
    ).resolves.toBe('done')
    expect(calls).toBe(3)

    calls = 0
    await expect(
      retryOnConcurrencyConflict(async () => {
        calls++
        throw conflict('40001')
      }),
    ).rejects.toThrow('deadlock detected')
    expect(calls).toBe(3)

    calls = 0
    await expect(
      retryOnConcurrencyConflict(async () => {
        calls++
        throw conflict('23503')
      }),
    ).rejects.toThrow()
    expect(calls).toBe(1) // anything else is not retried
  })

  it('one that still escapes is a 503 with Retry-After, never a 500; the log keeps its SQLSTATE', async () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const app = Fastify({ loggerInstance: createLogger('error', sink) as FastifyBaseLogger })
    await errorHandling(app)
    await app.register(async (oauth) => {
      answerErrorsAs(oauth, 'oauth')
      oauth.post('/api/oauth/token', async () => {
        throw conflict('40P01')
      })
    })
    app.get('/account/apps', async () => {
      throw conflict('40001')
    })
    const api = await app.inject({ method: 'POST', url: '/api/oauth/token' })
    expect(api.statusCode).toBe(503)
    expect(api.headers['retry-after']).toBe('5')
    expect(api.json()).toMatchObject({ error: 'temporarily_unavailable' })
    const page = await app.inject({ url: '/account/apps' })
    expect(page.statusCode).toBe(503)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(lines.join('')).toContain('"errorCode":"40P01"')
    await app.close()
  })

  it('a statement ended by statement_timeout (57014, rolled back) is a 503 with Retry-After too', async () => {
    const app = Fastify({ logger: false })
    await errorHandling(app)
    await app.register(async (oauth) => {
      answerErrorsAs(oauth, 'oauth')
      oauth.post('/api/oauth/token', async () => {
        throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })
      })
    })
    const api = await app.inject({ method: 'POST', url: '/api/oauth/token' })
    expect(api.statusCode).toBe(503)
    expect(api.headers['retry-after']).toBe('5')
    expect(api.json()).toMatchObject({ error: 'temporarily_unavailable' })
    await app.close()
  })
})
