import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'

// Issue 31, item 10: the logs redacted secret query parameters by their literal name, so a reset
// token sent as `?to%6Ben=` or `?%74oken=` (which the server reads as `token`) was logged in full.
const lines: string[] = []
let t: TestApp
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  t = await buildTestApp({ env: { LOG_LEVEL: 'info' }, logDestination: sink })
})
afterAll(async () => t.close())

describe('secret query parameters in the request log, however their names are spelled', () => {
  it.each(['to%6Ben', '%74oken', 'TOKEN', '%54%4F%4B%45%4E'])(
    '?%s=<reset token> is redacted at info',
    async (name) => {
      const secret = randomToken()
      const res = await t.app.inject({ method: 'GET', url: `/account/reset-password?${name}=${secret}` })
      expect(res.statusCode).toBe(400) // read as the token parameter: an unknown link
      const logged = lines.filter((l) => l.includes('/account/reset-password'))
      expect(logged.length).toBeGreaterThan(0)
      expect(logged.join('\n')).toContain(`${name}=[Redacted]`)
      expect(lines.join('\n')).not.toContain(secret)
    },
  )
})
