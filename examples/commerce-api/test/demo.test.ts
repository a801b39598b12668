import { statSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { apiDemoTest } from '../../../test/helpers/api-demo.js'

/**
 * `npm run commerce-api:demo` against an authorization server that is already running: it registers
 * the commerce API, starts it, runs the flow with a person (played here over real HTTP), and as the
 * shop syncs a catalogue, makes a link, clicks it, reports a conversion and prints the statistics.
 */
const world = apiDemoTest({ dir: 'commerce-api', prefix: 'COMMERCE' })

it('starts the commerce API beside the server and walks a shop through sync, link, click, conversion, stats', async () => {
  const run = await world.start()
  const { demo, waitFor, authorize } = run
  expect(authorize.searchParams.get('scope')).toBe('ecommerce:write products:sync')
  expect(authorize.searchParams.get('resource')).toBe(`http://127.0.0.1:${run.port}/api`)
  expect(demo.output()).toMatch(/Registered the commerce API as resource server rs_\S+ \(credentials kept in/)
  expect(statSync(join(world.dataDir, 'commerce-api-resource-server.json')).mode & 0o777).toBe(0o600)

  await run.consent()

  await waitFor(/6\. POST \S+\/api\/products\/batch \(3 products\) → 200 \{"received":3,"created":3/)
  await waitFor(/7\. POST \S+\/api\/links → 201/)
  await waitFor(
    /Location: https:\/\/shop\.example\/p\/sku-1001\?utm_source=newsletter&utm_medium=email&utm_campaign=spring-sale&lclid=[\w-]{22}/,
  )
  await waitFor(/9\. POST \S+\/api\/conversions .* → 201/)
  await waitFor(/clicks 1, conversions 1, conversion rate 1/)
  await waitFor(/"value_minor": "5990"/)
  await waitFor(/Done\. Both services keep running until Ctrl-C\./)
  run.expectTokenKeptSecret()
  await run.interruptAndExpectStopped()
}, 90_000)
