import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'

/** /favicon.ico, which every browser asks for on every page: an icon, served like our /static files. */
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(async () => t.close())

/** The headers that say how a file may be kept and used, without those that differ per file. */
const policyHeaders = (headers: Record<string, unknown>) => {
  const { etag: _etag, 'content-type': _type, 'content-length': _length, date: _date, ...rest } = headers
  return rest
}

describe('/favicon.ico', () => {
  it('is a small ICO file holding a PNG, with the cache and security headers of /static', async () => {
    const icon = await t.app.inject({ method: 'GET', url: '/favicon.ico' })
    expect(icon.statusCode).toBe(200)
    expect(icon.headers['content-type']).toBe('image/x-icon')
    const body = icon.rawPayload
    expect([...body.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]) // ICO, one image
    expect(body.subarray(22, 30).toString('latin1')).toBe('\x89PNG\r\n\x1a\n')
    expect(body.length).toBeLessThan(2048)
    const style = await t.app.inject({ method: 'GET', url: '/static/style.css' })
    expect(policyHeaders(icon.headers)).toEqual(policyHeaders(style.headers))
    expect(icon.headers['cache-control']).toBe('public, max-age=3600')
  })

  it('answers 304 to a browser that has it (ETag)', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/favicon.ico' })
    const again = await t.app.inject({
      method: 'GET',
      url: '/favicon.ico',
      headers: { 'if-none-match': String(first.headers.etag) },
    })
    expect(again.statusCode).toBe(304)
    expect(again.rawPayload.length).toBe(0)
  })
})
