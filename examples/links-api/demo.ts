/**
 * `npm run links-api:demo`: the authorization server and the links API side by side, for a
 * newcomer. Starts linkauth (dist/, on DATABASE_URL or its embedded PGlite in DATA_DIR) unless one
 * already answers at LINKAUTH_URL; registers the links API as a resource server with its resource
 * identifier and scopes (once: the credentials are kept in $DATA_DIR/links-api-resource-server.json);
 * registers its MCP endpoint (/mcp) the same way, as its own resource; starts the links API; runs the authorization flow with a person in a browser, asking for a token
 * for the links API (resource=); uses the token on the links API; and watches the
 * token stop working when the person revokes the application on /account/apps.
 *
 * Environment: LINKAUTH_URL (default $ISSUER, or http://localhost:$PORT with PORT 3000),
 * LINKAUTH_ADMIN_URL (http://127.0.0.1:$ADMIN_PORT with ADMIN_PORT 3001), the server's own settings,
 * ADMIN_TOKEN, DATA_DIR (./.data), LINKS_PORT (3002), LINKS_RESOURCE_SERVER_ID/_SECRET (to use
 * credentials of your own), DEMO_PORT (the callback port, like npm run demo), DEMO_TIMEOUT (seconds
 * to wait for the browser, 600), and every LINKS_* setting of the links API. Ctrl-C stops both
 * services.
 */
import { protectedResourceMetadataUrl as mcpMetadataUrl } from '@linkauth/resource'
import { type Metadata, say } from '../../scripts/authorization-flow.js'
import {
  apiClient,
  type DemoApi,
  demoPlaces,
  expectStatus,
  indent,
  runDemo,
  startDemo,
} from '../shared/demo.js'

const env = process.env
const LINKS: DemoApi = {
  dir: 'links-api',
  prefix: 'LINKS',
  defaultPort: 3002,
  name: 'Links API',
  label: 'the links API',
  scopes: ['links:read', 'links:write'],
  appName: 'links API demo',
  mcp: { path: '/mcp', name: 'Links for AI agents', prefix: 'LINKS_MCP' },
}
const { url: linksUrl } = demoPlaces(env, LINKS)
const api = apiClient(linksUrl)

/** How often the demo asks, while it waits for the revocation. */
const WATCH_INTERVAL_MS = 200

/**
 * Until the links API refuses the token. linkauth's introspection turns inactive the moment the
 * person clicks Revoke, so its first "inactive" marks the click (within one interval); the links API
 * learns through the event feed, and the gap between the two is what the demo shows.
 */
async function watchRevocation(meta: Metadata, token: string, credentials: { id: string; secret: string }) {
  const basic = Buffer.from(`${credentials.id}:${credentials.secret}`).toString('base64')
  const activeAtLinkauth = async () => {
    const res = await fetch(meta.introspection_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
      signal: AbortSignal.timeout(10_000),
    })
    return res.ok ? ((await res.json()) as { active?: boolean }).active === true : true
  }
  let revokedAt: number | undefined
  for (;;) {
    if (revokedAt === undefined && !(await activeAtLinkauth())) revokedAt = Date.now()
    const res = await api('GET', '/api/links', token)
    if (res.status === 401) {
      const after = Date.now() - (revokedAt ?? Date.now())
      say(`   ${new Date().toISOString()} → 401 ${String(res.json?.error)}: the links API refused the token`)
      say(
        `   ${after} ms after linkauth revoked it (measured every ${WATCH_INTERVAL_MS} ms). It learned of the`,
      )
      say(`   revocation from linkauth's event feed, without asking linkauth per request.`)
      return
    }
    if (res.status !== 200) say(`   ${new Date().toISOString()} → ${res.status}`)
    await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS))
  }
}

async function main(): Promise<number> {
  const demo = await startDemo(env, LINKS)
  if ('exitCode' in demo) return demo.exitCode
  const { token, tokenFile, meta, credentials, mcpResource } = demo

  const created = await api('POST', '/api/links', token, {
    target_url: 'https://example.com/',
    tags: ['demo'],
  })
  expectStatus('creating a link', created, 201)
  say(`6. POST ${linksUrl}/api/links → ${created.status}`)
  say(`   ${indent(created.json)}`)
  const hop = await fetch(String(created.json.short_url), { redirect: 'manual' })
  say(`7. GET ${String(created.json.short_url)} → ${hop.status}, Location: ${hop.headers.get('location')}`)
  const stats = await api('GET', `/api/links/${String(created.json.id)}/stats`, token)
  say(
    `8. GET ${linksUrl}/api/links/${String(created.json.id)}/stats → total_clicks ${String(stats.json.total_clicks)}`,
  )
  say()
  say(`   Try it yourself:`)
  say(`   curl -H "Authorization: Bearer $(cat ${tokenFile})" ${linksUrl}/api/links`)
  say()
  if (mcpResource) {
    say(`   Connect an AI agent (an MCP client) to ${mcpResource}`)
    say(`   It finds linkauth at ${mcpMetadataUrl(mcpResource)}`)
    say(`   and asks for a token for ${mcpResource} (its own audience; the token above is refused there).`)
    say(`   MCP Inspector: npx @modelcontextprotocol/inspector, transport "Streamable HTTP", that URL,`)
    say(`   client id of an app you registered: npm run cli -- clients create --name "My agent" \\`)
    say(`     --redirect-uri http://localhost:6274/oauth/callback`)
    say()
  }
  say(`9. Now revoke "links API demo" on ${meta.issuer}/account/apps (you are signed in there).`)
  say(`   Watching: GET ${linksUrl}/api/links with the token, every ${WATCH_INTERVAL_MS} ms …`)
  await watchRevocation(meta, token, credentials)
  say()
  say(`Done. Both services keep running until Ctrl-C.`)
  return 0
}

await runDemo('links-api demo', main)
