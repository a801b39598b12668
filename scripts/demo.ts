/**
 * `npm run demo`: the whole Authorization Code + PKCE flow, against a running linkauth, that a person
 * can watch. It registers a demo application whose redirect_uri is a tiny callback server on
 * 127.0.0.1, creates a demo user, prints the authorize URL to open in a browser, and when the
 * callback receives the code, swaps it at the token endpoint with the PKCE verifier and prints the
 * answer (tokens abbreviated).
 *
 * Environment: LINKAUTH_URL (default http://localhost:3000), LINKAUTH_ADMIN_URL (default
 * http://ADMIN_HOST:ADMIN_PORT, 127.0.0.1:3001 unless set), ADMIN_TOKEN (default: read from $DATA_DIR/admin-token, DATA_DIR=./.data),
 * DEMO_PORT (the callback port; default: the previous run's, else any free port), DEMO_TIMEOUT
 * (seconds to wait; default 600). The application and user it registers are kept in
 * $DATA_DIR/linkauth-demo.json and reused by the next run.
 */
import { adminToken, adminUrl, createAdminClient } from '../src/cli/admin-client.js'
import { dataDirOf, metadata, runAuthorizationFlow, say } from './authorization-flow.js'

const env = process.env
const publicUrl = (env.LINKAUTH_URL || 'http://localhost:3000').replace(/\/$/, '')

/** Enough of a secret to recognise it, never enough to use it. */
const abbreviate = (value: unknown) =>
  typeof value === 'string' && value.length > 16
    ? `${value.slice(0, 12)}… (${value.length} characters)`
    : value

async function main(): Promise<number> {
  const meta = await metadata(publicUrl)
  say(`linkauth demo: the Authorization Code flow with PKCE against ${meta.issuer}`)
  say()
  const result = await runAuthorizationFlow({
    meta,
    request: createAdminClient({ baseUrl: adminUrl(env), token: adminToken(env) }),
    appName: 'linkauth demo',
    port: Number(env.DEMO_PORT || 0),
    timeoutSeconds: Number(env.DEMO_TIMEOUT || 600),
    dataDir: dataDirOf(env),
  })
  if (result.outcome === 'denied') return 1
  const { response, body: tokens } = result
  if (!response.ok) {
    say(`5. The token endpoint refused (${response.status}): ${JSON.stringify(tokens)}`)
    return 1
  }
  const shown = Object.fromEntries(
    Object.entries(tokens).map(([k, v]) => [k, /token/.test(k) && k !== 'token_type' ? abbreviate(v) : v]),
  )
  say(`5. The token response (${response.status}), tokens abbreviated:`)
  say()
  for (const line of JSON.stringify(shown, null, 2).split('\n')) say(`   ${line}`)
  if (typeof tokens.access_token === 'string') {
    const payload = tokens.access_token.split('.')[1]
    if (payload) {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>
      const { iss, sub, aud, scope, client_id, exp } = claims
      say()
      say(`   The access token is a signed JWT; some of its claims:`)
      say(`   ${JSON.stringify({ iss, sub, aud, scope, client_id, exp })}`)
    }
  }
  say()
  say(`Done: the whole flow, from the authorize URL to the tokens.`)
  return 0
}

try {
  process.exitCode = await main()
} catch (err) {
  process.stderr.write(`linkauth demo: ${(err as Error).message}\n`)
  process.exitCode = 1
}
