import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLinksApp } from '../../examples/links-api/src/app.js'
import {
  createLinksTestDatabase,
  type LinksTestDatabase,
} from '../../examples/links-api/test/links-database.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD } from '../helpers/browser.js'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { AGENT_REDIRECT_URI, BrowserAgentProvider } from '../helpers/mcp-agent.js'
import { freePort } from '../helpers/net.js'
import {
  BROWSER_TEST_TIMEOUT,
  expectNoSeriousA11yViolations,
  launchBrowser,
  newPage,
  screenshot,
  signIn,
  STEP_TIMEOUT,
} from '../helpers/playwright.js'
import { captureLogger } from '../helpers/resource.js'
import { registerApi } from '../helpers/resource-apis.js'

/**
 * Issue 27 §3 with a person in a real browser: the official MCP SDK client (its auth() through
 * StreamableHTTPClientTransport and an OAuthClientProvider) starts from the links API's /mcp 401,
 * finds linkauth by RFC 9728 and RFC 8414, uses a Client ID Metadata Document URL (served by a local
 * HTTPS server) as its client_id, and sends the user to authorize with PKCE and `resource`; the
 * user signs in and sees, in chromium, that the application is not registered and which host vouches
 * for it, and allows; the SDK exchanges the code and makes an authenticated MCP call.
 */

/** The SDK's provider whose user is a person in chromium, not an HTTP script. */
class ChromiumAgentProvider extends BrowserAgentProvider {
  consentText = ''
  constructor(
    private readonly base: string,
    private readonly chromium: Browser,
    url: string,
    private readonly person: { email: string; password: string },
  ) {
    super(base, { kind: 'metadata-document', url }, person)
  }

  override async redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url)
    if (url.origin !== this.base) throw new Error(`sent to ${url.origin}, not the issuer`)
    const { context, page } = await newPage(this.chromium)
    try {
      // The agent's redirect URI is not a server of this test: the browser's request is caught there.
      await context.route(`${AGENT_REDIRECT_URI}**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Agent</title>' }),
      )
      await page.goto(url.href)
      await signIn(page, this.person)
      const notice = page.getByRole('note')
      await notice.waitFor()
      this.consentText = (await page.locator('main').textContent()) ?? ''
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'consent-mcp-metadata-document')
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL((u) => u.href.startsWith(AGENT_REDIRECT_URI), { timeout: STEP_TIMEOUT })
      this.code = new URL(page.url()).searchParams.get('code') ?? undefined
    } finally {
      await context.close()
    }
  }
}

describe.skipIf(!BROWSER_AVAILABLE)('an MCP agent by its metadata document, consent in chromium', () => {
  let t: TestApp
  let issuer: string
  let documents: DocumentServer
  let linksDb: LinksTestDatabase
  let linksApp: FastifyInstance
  let verifier: ResourceVerifier
  let mcpUrl: URL
  let chromium: Browser

  beforeAll(async () => {
    documents = await startDocumentServer()
    const port = await freePort()
    issuer = `http://127.0.0.1:${port}`
    t = await buildTestApp({ env: { ISSUER: issuer, CLIENT_METADATA_TEST_CA: documents.caPath } })
    await t.app.listen({ port, host: '127.0.0.1' })
    linksDb = await createLinksTestDatabase(t.database)
    const linksPort = await freePort()
    const linksBase = `http://127.0.0.1:${linksPort}`
    mcpUrl = new URL(`${linksBase}/mcp`)
    const scopes = ['links:read', 'links:write']
    const rest = await registerApi(t, { name: 'Links API', resource: `${linksBase}/api`, scopes })
    const mcp = await registerApi(t, { name: 'Links for AI agents', resource: mcpUrl.href, scopes })
    const logger = captureLogger().logger
    const restVerifier = await createResourceVerifier({
      issuer,
      resource: `${linksBase}/api`,
      credentials: rest,
      logger,
    })
    verifier = await createResourceVerifier({ issuer, resource: mcpUrl.href, credentials: mcp, logger })
    linksApp = await buildLinksApp({
      config: { publicUrl: linksBase },
      db: linksDb.db,
      verifier: restVerifier,
      mcp: { verifier, sessionSecret: 'test session secret, 32 bytes or more' },
    })
    linksApp.addHook('onClose', () => restVerifier.close())
    await linksApp.listen({ port: linksPort, host: '127.0.0.1' })
    expect((linksApp.server.address() as AddressInfo).port).toBe(linksPort)
    chromium = await launchBrowser()
  }, 90_000)

  afterAll(async () => {
    await chromium?.close()
    await linksApp?.close()
    await verifier?.close()
    await linksDb?.close()
    await t?.close()
    await documents?.close()
  })

  it(
    'from /mcp’s 401 to an authenticated tool call, the person approving an unregistered agent',
    async () => {
      const path = '/agents/browser.json'
      const clientId = documents.url(path)
      documents.publish(
        path,
        clientDocument(clientId, { client_name: 'Research Agent', redirect_uris: [AGENT_REDIRECT_URI] }),
      )
      const email = `mcp-browser-${Math.random().toString(36).slice(2)}@example.com`
      await t.services.users.createUser({ email, password: PASSWORD })
      const provider = new ChromiumAgentProvider(issuer, chromium, clientId, { email, password: PASSWORD })

      // The first request has no token: 401, discovery, and the person is sent to authorize.
      const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
      await expect(new Client({ name: 'agent', version: '1.0.0' }).connect(first)).rejects.toThrow(
        UnauthorizedError,
      )
      const sent = provider.authorizationUrls[0]!
      expect(sent.searchParams.get('client_id')).toBe(clientId)
      expect(sent.searchParams.get('resource')).toBe(mcpUrl.href)
      expect(sent.searchParams.get('code_challenge_method')).toBe('S256')
      expect(sent.searchParams.get('code_challenge')).toBeTruthy()

      // What the person saw before allowing: not registered, the vouching host beside the name.
      const host = new URL(clientId).host
      expect(provider.consentText).toContain('Not registered with this service.')
      expect(provider.consentText).toContain('Research Agent')
      expect(provider.consentText).toContain(`${host} vouches for it`)

      // The SDK exchanges the code (auth() with the authorization code), then calls a tool.
      await first.finishAuth(provider.takeCode())
      expect(provider.tokens()?.access_token).toBeTruthy()
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
      const client = new Client({ name: 'agent', version: '1.0.0' })
      await client.connect(transport)
      try {
        const created = await client.callTool({
          name: 'create_link',
          arguments: { target_url: 'https://research.example/paper' },
        })
        expect(created.isError).toBeFalsy()
        expect(created.structuredContent).toMatchObject({ target_url: 'https://research.example/paper' })
      } finally {
        await client.close()
      }
      // The grant is the metadata-document client's, by its URL.
      const grant = await t.database.db
        .selectFrom('grants')
        .select(['client_id', 'scopes'])
        .where('client_id', '=', clientId)
        .executeTakeFirstOrThrow()
      expect(grant.scopes).toEqual(['links:read', 'links:write'])
      expect(documents.hits(path)).toBe(1)
    },
    BROWSER_TEST_TIMEOUT,
  )
})
