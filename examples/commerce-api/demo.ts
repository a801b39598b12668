/**
 * `npm run commerce-api:demo`: the authorization server and the commerce API side by side, and a
 * shop application's whole path through them. Starts linkauth (dist/, on DATABASE_URL or its
 * embedded PGlite in DATA_DIR) unless one already answers at LINKAUTH_URL; registers the commerce
 * API as a resource server with its resource identifier and scopes (once: the credentials are kept
 * in $DATA_DIR/commerce-api-resource-server.json); starts the commerce API; runs the authorization
 * flow with a person in a browser for a token for the commerce API (resource=); then, as the shop:
 * syncs a catalogue, creates an e-commerce link, follows it as a visitor (the click id comes back
 * in the redirect), reports a conversion for that click, and prints the link's statistics.
 *
 * Environment: LINKAUTH_URL (default $ISSUER, or http://localhost:$PORT with PORT 3000),
 * LINKAUTH_ADMIN_URL (http://127.0.0.1:$ADMIN_PORT with ADMIN_PORT 3001), the server's own settings,
 * ADMIN_TOKEN, DATA_DIR (./.data), COMMERCE_PORT (3003), COMMERCE_RESOURCE_SERVER_ID/_SECRET (to use
 * credentials of your own), DEMO_PORT (the callback port), DEMO_TIMEOUT (seconds to wait for the
 * browser, 600), and every COMMERCE_* setting of the commerce API. Ctrl-C stops both services.
 */
import { CliError } from '../../src/cli/admin-client.js'
import { say } from '../../scripts/authorization-flow.js'
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
const COMMERCE: DemoApi = {
  dir: 'commerce-api',
  prefix: 'COMMERCE',
  defaultPort: 3003,
  name: 'Commerce API',
  label: 'the commerce API',
  scopes: ['ecommerce:write', 'products:sync'],
  appName: 'commerce API demo shop',
}
const { url: commerceUrl } = demoPlaces(env, COMMERCE)
const api = apiClient(commerceUrl)

async function main(): Promise<number> {
  const demo = await startDemo(env, COMMERCE)
  if ('exitCode' in demo) return demo.exitCode
  const { token, tokenFile } = demo

  const catalogue = [
    ['SKU-1001', 'Red running shoes', '59.90', 'in_stock'],
    ['SKU-1002', 'Blue running shoes', '64.90', 'in_stock'],
    ['SKU-1003', 'Trail socks (3 pairs)', '12.50', 'out_of_stock'],
  ].map(([id, title, price, availability]) => ({
    product_id: id,
    title,
    url: `https://shop.example/p/${id!.toLowerCase()}`,
    price,
    currency: 'EUR',
    availability,
  }))
  const synced = await api('POST', '/api/products/batch', token, { products: catalogue })
  expectStatus('syncing the catalogue', synced, 200)
  say(
    `6. POST ${commerceUrl}/api/products/batch (3 products) → ${synced.status} ${JSON.stringify(synced.json)}`,
  )

  const link = await api('POST', '/api/links', token, {
    product_id: 'SKU-1001',
    campaign: 'spring-sale',
    utm: { source: 'newsletter', medium: 'email' },
  })
  expectStatus('creating the link', link, 201)
  say(`7. POST ${commerceUrl}/api/links → ${link.status}`)
  say(`   ${indent(link.json)}`)

  const hop = await fetch(String(link.json.short_url), { redirect: 'manual' })
  const location = hop.headers.get('location') ?? ''
  const clickId = new URL(location || 'http://x/').searchParams.get('lclid')
  say(`8. A visitor follows ${String(link.json.short_url)} → ${hop.status}`)
  say(`   Location: ${location}`)
  if (!clickId) throw new CliError('the redirect carried no click id', 1)
  say(`   The shop keeps the click id lclid=${clickId} with the visitor's session.`)

  const conversion = await api('POST', '/api/conversions', token, {
    click_id: clickId,
    order_id: `ORDER-${Date.now()}`,
    value: '59.90',
    currency: 'EUR',
  })
  expectStatus('reporting the conversion', conversion, 201)
  say(`9. POST ${commerceUrl}/api/conversions (the order, with that click id) → ${conversion.status}`)
  say(`   ${indent(conversion.json)}`)

  const stats = await api('GET', `/api/links/${String(link.json.id)}/stats`, token)
  expectStatus('reading the statistics', stats, 200)
  const { days: _days, ...totals } = stats.json as Record<string, unknown>
  say(`10. GET ${commerceUrl}/api/links/${String(link.json.id)}/stats → ${stats.status}`)
  say(`   ${indent(totals)}`)
  say(
    `   clicks ${String(stats.json.clicks)}, conversions ${String(stats.json.conversions)}, conversion rate ${String(stats.json.conversion_rate)}`,
  )
  say()
  say(`   Try it yourself:`)
  say(`   curl -H "Authorization: Bearer $(cat ${tokenFile})" ${commerceUrl}/api/products`)
  say()
  say(`Done. Both services keep running until Ctrl-C.`)
  return 0
}

await runDemo('commerce-api demo', main)
