import { request } from 'node:http'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createHttpServer } from '../../src/http-server.js'
import { createLogger } from '../../src/logger.js'
import type { AppDeps } from '../../src/services.js'

/**
 * main.ts closes the database right after app.close(). A handler still running then (its client
 * hung up, so Node no longer counts the connection) would use a closed pool: close() must wait.
 */
describe('app.close() and handlers still running', () => {
  it('waits for a handler whose client hung up, and only for it', async () => {
    const config = loadConfig({})
    const deps = { config, logger: createLogger('silent') } as unknown as AppDeps
    const app = await createHttpServer(deps)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let entered!: () => void
    const handlerEntered = new Promise<void>((resolve) => (entered = resolve))
    let handlerFinished = false
    app.get('/slow', async () => {
      entered()
      await gate
      handlerFinished = true
      return { ok: true }
    })
    app.get('/fast', async () => ({ ok: true }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }

    // A finished request does not hold close() up; the slow one's client hangs up mid-handler.
    expect((await app.inject({ url: '/fast' })).statusCode).toBe(200)
    const hungUp = request({ port, host: '127.0.0.1', path: '/slow' })
    hungUp.on('error', () => {})
    hungUp.end()
    await handlerEntered
    hungUp.destroy()

    let closed = false
    const closing = app.close().then(() => (closed = true))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(closed).toBe(false)
    release()
    await closing
    expect(handlerFinished).toBe(true)
  })
})
