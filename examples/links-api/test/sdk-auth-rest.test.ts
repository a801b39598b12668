import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLinksApp } from '../src/app.js'
import { listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { PASSWORD, seed } from '../../../test/helpers/browser.js'
import { captureLogger } from '../../../test/helpers/resource.js'
import { freePort } from '../../../test/helpers/net.js'
import { registerApi } from '../../../test/helpers/resource-apis.js'
import {
  clientDocument,
  type DocumentServer,
  startDocumentServer,
} from '../../../test/helpers/document-server.js'
import { createLinksTestDatabase, type LinksTestDatabase } from './links-database.js'
import {
  AGENT_REDIRECT_URI,
  type AgentRegistration,
  BrowserAgentProvider,
} from '../../../test/helpers/mcp-agent.js'

/**
 * The official MCP SDK's client-side OAuth (`auth()` with an OAuthClientProvider) used as a plain
 * OAuth client of the links REST API (issue 27): from the API's 401, RFC 9728 discovery, RFC 8414
 * metadata, a client id (metadata document, or dynamic registration as the SDK's fallback), PKCE with
 * `resource`, consent through the sign-in and consent forms, and an authenticated REST call.
 */
let t: TestApp
let issuer: string
let linksDb: LinksTestDatabase
let verifier: ResourceVerifier
let linksApp: FastifyInstance
let api: string
let documents: DocumentServer

beforeAll(async () => {
  documents = await startDocumentServer()
  ;({ t, issuer } = await listenTestApp({ env: { CLIENT_METADATA_TEST_CA: documents.caPath } }))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  api = `${base}/api`
  const credentials = await registerApi(t, {
    name: 'Links API',
    resource: api,
    scopes: ['links:read', 'links:write'],
  })
  verifier = await createResourceVerifier({
    issuer,
    resource: api,
    credentials,
    logger: captureLogger().logger,
  })
  linksDb = await createLinksTestDatabase(t.database)
  linksApp = await buildLinksApp({ config: { publicUrl: base }, db: linksDb.db, verifier })
  await linksApp.listen({ port, host: '127.0.0.1' })
}, 60_000)

afterAll(async () => {
  await linksApp?.close()
  await verifier?.close()
  await linksDb?.close()
  await t?.close()
  await documents?.close()
})

async function metadataDocument(): Promise<AgentRegistration> {
  const path = '/rest-agent.json'
  const document = clientDocument(documents.url(path), {
    client_name: 'Test agent',
    redirect_uris: [AGENT_REDIRECT_URI],
  })
  return { kind: 'metadata-document', url: documents.publish(path, document) }
}

describe.each([
  { name: 'a client-id metadata document', register: metadataDocument, kind: 'metadata_document' },
  {
    name: 'dynamic registration (RFC 7591)',
    register: async (): Promise<AgentRegistration> => ({ kind: 'dynamic' }),
    kind: 'dynamic',
  },
])('the SDK’s auth() with $name against the REST API', ({ register, kind }) => {
  it('from the 401 to an authenticated call that creates a link', async () => {
    const s = await seed(t)
    const registration = await register()
    const provider = new BrowserAgentProvider(issuer, registration, { email: s.email, password: PASSWORD })

    // The API's refusal names its RFC 9728 metadata; the SDK takes it from there.
    const refused = await fetch(`${api}/links`)
    expect(refused.status).toBe(401)
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(refused)
    expect(resourceMetadataUrl?.href).toBe(`${new URL(api).origin}/.well-known/oauth-protected-resource/api`)

    const serverUrl = new URL(api)
    expect(await auth(provider, { serverUrl, resourceMetadataUrl })).toBe('REDIRECT')
    const sent = provider.authorizationUrls[0]!
    expect(sent.origin + sent.pathname).toBe(`${issuer}/oauth/authorize`)
    expect(sent.searchParams.get('resource')).toBe(api)
    expect(sent.searchParams.get('code_challenge_method')).toBe('S256')
    expect(sent.searchParams.get('scope')!.split(' ').sort()).toEqual(['links:read', 'links:write'])
    const clientId = sent.searchParams.get('client_id')!
    if (registration.kind === 'metadata-document') expect(clientId).toBe(registration.url)
    else expect(clientId).toBe(provider.clientInformation()!.client_id)
    const row = await t.database.db
      .selectFrom('clients')
      .select('kind')
      .where('id', '=', clientId)
      .executeTakeFirstOrThrow()
    expect(row.kind).toBe(kind)

    expect(
      await auth(provider, { serverUrl, resourceMetadataUrl, authorizationCode: provider.takeCode() }),
    ).toBe('AUTHORIZED')
    const token = provider.tokens()!
    expect(token.scope!.split(' ').sort()).toEqual(['links:read', 'links:write'])

    const created = await fetch(`${api}/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target_url: 'https://shop.example/rest-agent' }),
    })
    expect(created.status).toBe(201)
    expect(await created.json()).toMatchObject({ target_url: 'https://shop.example/rest-agent' })
    const listed = await fetch(`${api}/links`, { headers: { authorization: `Bearer ${token.access_token}` } })
    expect(listed.status).toBe(200)
  })
})
