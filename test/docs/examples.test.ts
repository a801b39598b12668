import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createResourceVerifier } from '@linkauth/resource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { linkauthClient } from '../../docs/examples/client.js'
import { accessTokenVerifier } from '../../docs/examples/resource-server.js'
import { buildLinksApp } from '../../examples/links-api/src/app.js'
import { createLinksTestDatabase } from '../../examples/links-api/test/links-database.js'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { freePort } from '../helpers/net.js'
import { LINKS_EXAMPLE_API, registerApi } from '../helpers/resource-apis.js'
import { captureLogger } from '../helpers/resource.js'

/**
 * The examples of docs/integrating.md are files the document includes verbatim; here they run
 * against a live server, with the test playing the user's browser (sign in, Allow).
 */

const doc = readFileSync('docs/integrating.md', 'utf8')
const example = (name: string) => readFileSync(`docs/examples/${name}`, 'utf8')

let t: TestApp
/** The links API as README's manual setup runs it: registered with --resource and --scope. */
const LINKS = LINKS_EXAMPLE_API
let linksApi: { base: string; close(): Promise<void> }
beforeAll(async () => {
  ;({ t } = await listenTestApp())
  await registerApi(t, LINKS)
  linksApi = await startLinksApi(t, LINKS.resource)
})
afterAll(async () => {
  await linksApi?.close()
  await t.close()
})

/** The links API over real HTTP, verifying tokens for `resource` with @linkauth/resource. */
async function startLinksApi(server: TestApp, resource: string) {
  const db = await createLinksTestDatabase(server.database)
  const verifier = await createResourceVerifier({
    issuer: server.config.issuer,
    resource,
    revocationFeed: false,
    logger: captureLogger().logger,
  })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const app = await buildLinksApp({ config: { publicUrl: base }, db: db.db, verifier })
  await app.listen({ port, host: '127.0.0.1' })
  return {
    base,
    close: async () => {
      await app.close()
      await verifier.close()
      await db.close()
    },
  }
}

/** The user's part: open the authorization URL, sign in, Allow; returns where the browser is sent. */
async function userApproves(authorizeUrl: string, email: string): Promise<URL> {
  const url = new URL(authorizeUrl)
  return new HttpBrowser(url.origin).signInAndAllow(url.pathname + url.search, email, PASSWORD)
}

describe('docs/integrating.md includes the examples verbatim', () => {
  it.each([
    ['client.ts', 'ts'],
    ['resource-server.ts', 'ts'],
    ['openid-client.ts', 'ts'],
    ['flow.sh', 'sh'],
  ])('%s', (name, language) => {
    expect(doc).toContain('```' + language + '\n' + example(name) + '```\n')
  })
})

describe('the examples work against a live server', () => {
  it('client.ts: discovery, authorization, code exchange, refresh, revocation; resource-server.ts verifies', async () => {
    const s = await seed(t)
    const app = linkauthClient({ issuer: t.config.issuer, clientId: s.client.id, redirectUri: REDIRECT_URI })
    const { url, pending } = await app.startAuthorization('links:read links:write')
    const callback = await userApproves(url.href, s.email)
    const tokens = await app.finishAuthorization(callback, pending)
    expect(tokens).toMatchObject({ scope: 'links:read links:write', expiresIn: t.config.accessTokenTtl })

    const verify = accessTokenVerifier({ issuer: t.config.issuer, audience: t.config.accessTokenAudience })
    const verified = await verify(`Bearer ${tokens.accessToken}`, 'links:write')
    expect(verified).toMatchObject({ ok: true, claims: { sub: s.user.id, client_id: s.client.id } })
    expect(await verify(`Bearer ${tokens.accessToken}`, 'products:sync')).toMatchObject({ status: 403 })
    expect(await verify('Bearer not.a.token', 'links:read')).toMatchObject({ status: 401 })
    expect(await verify(undefined, 'links:read')).toMatchObject({ status: 401 })

    const refreshed = await app.refresh(tokens.refreshToken)
    expect(refreshed.refreshToken).not.toBe(tokens.refreshToken)
    // A retry with the spent token inside REFRESH_REUSE_WINDOW (a lost response) is answered too,
    // with the same refresh token (one lineage).
    const retried = await app.refresh(tokens.refreshToken)
    expect(retried.refreshToken).toBe(refreshed.refreshToken)

    // Revocation (another branch builds the endpoint): runs once it is there. It ends the family.
    if (t.app.hasRoute({ method: 'POST', url: '/api/oauth/revoke' })) {
      await app.revoke(refreshed.refreshToken)
      await expect(app.refresh(refreshed.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' })
      await expect(app.refresh(retried.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' })
      await expect(app.refresh(tokens.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' })
    }
  })

  it('flow.sh: the curl sequence reads the user’s links from the links API and runs to the refreshed tokens', async () => {
    const s = await seed(t)
    const child = spawn('bash', ['docs/examples/flow.sh'], {
      env: {
        ...process.env,
        ISSUER: t.config.issuer,
        CLIENT_ID: s.client.id,
        REDIRECT_URI,
        LINKS_API: linksApi.base,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    const authorizeUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString()
        const match = /Open in a browser: (\S+)\n/.exec(stdout)
        if (match) resolve(match[1]!)
      })
      void exited.then(() => reject(new Error(`flow.sh ended early: ${stdout}${stderr}`)))
    })
    const callback = await userApproves(authorizeUrl, s.email)
    child.stdin.end(`${callback.href}\n`)
    expect(await exited, stderr).toBe(0)

    const tokens = JSON.parse(/^Tokens: (.*)$/m.exec(stdout)![1]!)
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'links:read links:write' })
    expect(stdout).toContain(`"client_id": "${s.client.id}"`)
    // No resource was named: the token lists the links API (it serves the scopes), which accepts it.
    expect(stdout).toContain(`"${LINKS.resource}"`)
    expect(JSON.parse(/^Links: (.*)$/m.exec(stdout)![1]!)).toEqual({ links: [], next_cursor: null })
    const refreshed = JSON.parse(/^Refreshed: (.*)$/m.exec(stdout)![1]!)
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect(refreshed.token_type).toBe('Bearer')
  })
})
