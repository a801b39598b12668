import { auth as aiSdkAuth, createMCPClient, type OAuthClientProvider as AiSdkProvider } from '@ai-sdk/mcp'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { describe, expect, it } from 'vitest'
import { PASSWORD } from '../../../test/helpers/browser.js'
import { clientDocument } from '../../../test/helpers/document-server.js'
import {
  AGENT_REDIRECT_URI,
  type AgentRegistration,
  BrowserAgentProvider,
} from '../../../test/helpers/mcp-agent.js'
import { documents, issuer, mcpUrl, t, useMcpServices } from './mcp-services.js'

/**
 * Issue 38 §3 with the agents' own libraries: an agent nobody registered (a dynamic registration,
 * or a Client ID Metadata Document) starts from the links API's bare /mcp URL asking for
 * `links:read` only, which the official SDK and `@ai-sdk/mcp` put into its registration; create_link
 * then answers 403 insufficient_scope; the agent asks again for `links:read links:write`, the person
 * allows, and the call succeeds: the same client, one app on the person's /account/apps.
 */
useMcpServices()

const WIDER = 'links:read links:write'

/** A person, and the agent's provider: refresh tokens kept or not (SDK 1.32 refreshes first on a 403). */
async function agent(registration: AgentRegistration) {
  const email = `step-up-${Math.random().toString(36).slice(2)}@example.com`
  await t.services.users.createUser({ email, password: PASSWORD })
  return new BrowserAgentProvider(
    issuer,
    registration,
    { email, password: PASSWORD },
    { keepRefreshToken: false },
  )
}

let published = 0
/** A metadata document whose `scope` is what the agent first asks for, as the SDKs register it. */
function metadataDocument(): AgentRegistration {
  const path = `/agents/step-up-${++published}.json`
  const url = documents.url(path)
  documents.publish(
    path,
    clientDocument(url, {
      client_name: 'Test agent',
      redirect_uris: [AGENT_REDIRECT_URI],
      scope: 'links:read',
    }),
  )
  return { kind: 'metadata-document', url }
}

/** The scopes a consent page lists, as their codes. */
function consentScopes(html: string): string[] {
  const list = /<ul class="scopes"[^>]*>([\s\S]*?)<\/ul>/.exec(html)![1]!
  return [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]!)
}

/** What the person's /account/apps lists (the JSON twin of the page), in the agent's last browser. */
async function connectedApps(provider: BrowserAgentProvider) {
  const { res, body } = await provider.browser.request('/api/account/apps')
  expect(res.status).toBe(200)
  return (JSON.parse(body) as { apps: { client_id: string; scopes: { scope: string }[] }[] }).apps
}

/** The registered client's row, and that the agent registered once (dynamic) or never (a document). */
async function expectOneClient(provider: BrowserAgentProvider, registration: AgentRegistration) {
  const clientId = provider.clientInformation()!.client_id
  if (registration.kind === 'metadata-document') expect(clientId).toBe(registration.url)
  const clients = await t.database.db
    .selectFrom('clients')
    .select(['id', 'kind', 'default_scopes'])
    .execute()
    .then((rows) => rows.filter((row) => !known.includes(row.id)))
  expect(clients).toEqual([
    {
      id: clientId,
      kind: registration.kind === 'dynamic' ? 'dynamic' : 'metadata_document',
      default_scopes: ['links:read'],
    },
  ])
  const apps = await connectedApps(provider)
  expect(apps.map((a) => a.client_id)).toEqual([clientId])
  expect(apps[0]!.scopes.map((s) => s.scope)).toEqual(['links:read', 'links:write'])
}

/** The client ids that existed before the test: what it added is the rest. */
let known: string[]
describe.each([
  { name: 'dynamic registration (RFC 7591)', register: (): AgentRegistration => ({ kind: 'dynamic' }) },
  { name: 'a Client ID Metadata Document', register: metadataDocument },
])('the official SDK, an agent known by $name', ({ register }) => {
  it('links:read first, 403 on create_link, the union asked and allowed, the call succeeds: one app', async () => {
    known = await clientIds()
    const registration = register()
    const provider = await agent(registration)
    // From the bare URL: discovery, registration (dynamic: with scope "links:read"), authorization.
    expect(await auth(provider, { serverUrl: mcpUrl, scope: 'links:read' })).toBe('REDIRECT')
    expect(provider.authorizationUrls[0]!.searchParams.get('scope')).toBe('links:read')
    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.takeCode() })).toBe(
      'AUTHORIZED',
    )
    expect(provider.tokens()!.scope).toBe('links:read')

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
    const client = new Client({ name: 'agent', version: '1.0.0' })
    await client.connect(transport)
    try {
      const call = { name: 'create_link', arguments: { target_url: 'https://agents.example/step-up' } }
      // The 403 names links:write; the SDK asks the person for the challenge's scope, same client_id.
      await expect(client.callTool(call)).rejects.toThrow(UnauthorizedError)
      const again = provider.authorizationUrls.at(-1)!
      expect(again.searchParams.get('scope')).toBe(WIDER)
      expect(again.searchParams.get('client_id')).toBe(provider.clientInformation()!.client_id)
      expect(consentScopes(provider.consentPages.at(-1)!)).toEqual(['links:read', 'links:write'])
      await transport.finishAuth(provider.takeCode())
      expect(provider.tokens()!.scope).toBe(WIDER)
      const created = await client.callTool(call)
      expect(created.isError).toBeFalsy()
      expect(created.structuredContent).toMatchObject({ target_url: 'https://agents.example/step-up' })
    } finally {
      await client.close()
    }
    await expectOneClient(provider, registration)
  })
})

describe('@ai-sdk/mcp, an agent it registers itself (RFC 7591)', () => {
  it('links:read first, 403 on create_link, the host asks for the union, the call succeeds: one app', async () => {
    known = await clientIds()
    const registration: AgentRegistration = { kind: 'dynamic' }
    const provider = await agent(registration)
    const aiProvider = provider as unknown as AiSdkProvider
    expect(await aiSdkAuth(aiProvider, { serverUrl: mcpUrl, scope: 'links:read' })).toBe('REDIRECT')
    const registered = await t.database.db
      .selectFrom('clients')
      .select('default_scopes')
      .where('id', '=', provider.clientInformation()!.client_id)
      .executeTakeFirstOrThrow()
    expect(registered.default_scopes).toEqual(['links:read'])
    expect(await aiSdkAuth(aiProvider, { serverUrl: mcpUrl, authorizationCode: provider.takeCode() })).toBe(
      'AUTHORIZED',
    )
    expect(provider.tokens()!.scope).toBe('links:read')

    const client = await createMCPClient({
      transport: { type: 'http', url: mcpUrl.href, authProvider: aiProvider },
    })
    try {
      const call = { name: 'create_link', arguments: { target_url: 'https://agents.example/ai-sdk' } }
      // @ai-sdk/mcp hands the 403 to its host, which asks the person for the challenge's scope.
      await expect(client.callTool(call)).rejects.toThrow(/insufficient_scope|403/)
      expect(await aiSdkAuth(aiProvider, { serverUrl: mcpUrl, scope: WIDER })).toBe('REDIRECT')
      expect(provider.authorizationUrls.at(-1)!.searchParams.get('scope')).toBe(WIDER)
      expect(consentScopes(provider.consentPages.at(-1)!)).toEqual(['links:read', 'links:write'])
      expect(await aiSdkAuth(aiProvider, { serverUrl: mcpUrl, authorizationCode: provider.takeCode() })).toBe(
        'AUTHORIZED',
      )
      expect(provider.tokens()!.scope).toBe(WIDER)
      const created = await client.callTool(call)
      expect(created.isError).toBeFalsy()
      expect(created.structuredContent).toMatchObject({ target_url: 'https://agents.example/ai-sdk' })
    } finally {
      await client.close()
    }
    await expectOneClient(provider, registration)
  })
})

async function clientIds(): Promise<string[]> {
  return (await t.database.db.selectFrom('clients').select('id').execute()).map((r) => r.id)
}
