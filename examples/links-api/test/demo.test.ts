import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { apiDemoTest } from '../../../test/helpers/api-demo.js'
import { hiddenField } from '../../../test/helpers/browser.js'

/**
 * `npm run links-api:demo` against an authorization server that is already running (so the demo
 * uses it rather than starting dist/): it registers the links API, starts it, runs the flow with a
 * person (played here over real HTTP), uses the token, and sees it refused after the revocation.
 */
const world = apiDemoTest({ dir: 'links-api', prefix: 'LINKS' })

it('starts the links API beside the server, uses a token on it, and sees the revocation', async () => {
  const run = await world.start()
  const { demo, waitFor, authorize } = run
  expect(authorize.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${run.callbackPort}/callback`)
  expect(demo.output()).toContain('Using the authorization server already running at')
  expect(demo.output()).toMatch(/Registered the links API as resource server rs_\S+ \(credentials kept in/)
  expect(statSync(join(world.dataDir, 'links-api-resource-server.json')).mode & 0o777).toBe(0o600)

  // The person: sign in, Allow; the browser lands on the demo's callback.
  const browser = await run.consent()

  await waitFor(/6\. POST \S+\/api\/links → 201/)
  await waitFor(/7\. GET \S+ → 302, Location: https:\/\/example\.com\//)
  await waitFor(/8\. GET \S+\/stats → total_clicks 1/)
  // Its MCP endpoint, registered as its own resource, is up and names its own metadata document.
  const mcpUrl = (await waitFor(/Connect an AI agent \(an MCP client\) to (\S+\/mcp)/))[1]!
  expect(demo.output()).toMatch(/Registered its MCP endpoint as resource server rs_\S+/)
  const mcp = await fetch(mcpUrl, { method: 'POST' })
  expect(mcp.status).toBe(401)
  expect(mcp.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp"')
  await waitFor(/9\. Now revoke "links API demo"/)
  // It watches as often as its README says.
  const interval = (await waitFor(/with the token, every (\d+) ms/))[1]!
  expect(readFileSync('examples/links-api/README.md', 'utf8')).toContain(`every ${interval} ms`)
  run.expectTokenKeptSecret()

  // The person revokes the demo application on the connected-apps page.
  const apps = await browser.request('/account/apps')
  const clientId = /\/account\/apps\/([\w-]+)\/revoke/.exec(apps.body)![1]!
  const revoked = await browser.request(`/account/apps/${clientId}/revoke`, {
    method: 'POST',
    form: { csrf_token: hiddenField(apps.body, 'csrf_token') },
  })
  expect(revoked.res.status).toBe(303)
  await waitFor(/→ 401 invalid_token: the links API refused the token/)
  // How soon, as its README says: from linkauth's revocation (its introspection) to the links API's refusal.
  const after = Number((await waitFor(/(\d+) ms after linkauth revoked it/))[1])
  expect(after).toBeLessThan(5_000)
  await waitFor(/Done\. Both services keep running until Ctrl-C\./)
  await run.interruptAndExpectStopped()
}, 90_000)
