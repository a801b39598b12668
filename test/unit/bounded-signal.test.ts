import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { boundedSignal } from '../../packages/resource/src/http.js'

// The garbage collector on demand, without starting node with --expose-gc.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

let server: Server
let url: string
beforeAll(async () => {
  // Answers after 5 s, like a long poll with nothing to say.
  server = createServer((_req, res) => setTimeout(() => res.end('{}'), 5_000).unref())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

it('bounds a fetch even while the garbage collector runs (a long poll under load)', async () => {
  const collecting = setInterval(gc, 20)
  const started = performance.now()
  const { signal, clear } = boundedSignal(new AbortController().signal, 300)
  try {
    await expect(fetch(url, { signal })).rejects.toMatchObject({ name: 'TimeoutError' })
  } finally {
    clear()
    clearInterval(collecting)
  }
  expect(performance.now() - started).toBeLessThan(2_000)
})

it('follows its parent, and clear() lets go of it', async () => {
  const parent = new AbortController()
  const first = boundedSignal(parent.signal, 60_000)
  const second = boundedSignal(parent.signal, 60_000)
  second.clear()
  parent.abort(new Error('stopping'))
  expect(first.signal.aborted).toBe(true)
  expect((first.signal.reason as Error).message).toBe('stopping')
  expect(second.signal.aborted).toBe(false)
  first.clear()
  expect(boundedSignal(parent.signal, 60_000).signal.aborted).toBe(true)
})
