import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, expect } from 'vitest'
import { buildLinksApp } from '../src/app.js'
import type { AppLimits } from '../../shared/app-leash.js'
import { listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { CHALLENGE, PASSWORD, REDIRECT_URI, seed, VERIFIER } from '../../../test/helpers/browser.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
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
  type BrowserAgentProvider,
} from '../../../test/helpers/mcp-agent.js'

/**
 * The services of the /mcp tests (mcp*.test.ts), each file its own: linkauth and the links API. The
 * links API's MCP endpoint with the official SDK client (Client + StreamableHTTPClientTransport
 * and its OAuth provider) against the running services: linkauth with its revocation feed, and the
 * links API with its REST API (/api) and its MCP endpoint (/mcp), each its own registered resource.
 */
export let t: TestApp
export let issuer: string
export let linksDb: LinksTestDatabase
export let restVerifier: ResourceVerifier
export let mcpVerifier: ResourceVerifier
export let linksApp: FastifyInstance
export let linksBase: string
export let mcpUrl: URL
/** Where agents publish their Client ID Metadata Documents (HTTPS, trusted by linkauth in tests). */
export let documents: DocumentServer
/** The MCP endpoint's registration at linkauth (its introspection credentials). */
export let mcpCredentials: { id: string; secret: string }

/**
 * Starts the services for the calling test file (beforeAll), and stops them after it (afterAll);
 * `links` adds to the links API's deps (the leash's limits, its clock) and sets how the MCP endpoint
 * verifies tokens (locally by default).
 */
export function useMcpServices(
  links: { appLimits?: AppLimits; clock?: { now(): Date }; verification?: 'local' | 'introspection' } = {},
) {
  beforeAll(async () => {
    documents = await startDocumentServer()
    ;({ t } = await listenTestApp({
      env: { EVENTS_MAX_WAIT_SECONDS: '2', CLIENT_METADATA_TEST_CA: documents.caPath },
    }))
    issuer = t.config.issuer
    const port = await freePort()
    linksBase = `http://127.0.0.1:${port}`
    mcpUrl = new URL(`${linksBase}/mcp`)
    const scopes = ['links:read', 'links:write']
    const rest = await registerApi(t, { name: 'Links API', resource: `${linksBase}/api`, scopes })
    const mcp = await registerApi(t, { name: 'Links for AI agents', resource: mcpUrl.href, scopes })
    mcpCredentials = mcp
    const logger = captureLogger().logger
    restVerifier = await createResourceVerifier({
      issuer,
      resource: `${linksBase}/api`,
      credentials: rest,
      logger,
    })
    mcpVerifier = await createResourceVerifier({
      issuer,
      resource: mcpUrl.href,
      credentials: mcp,
      logger,
      ...(links.verification ? { mode: links.verification } : {}),
    })
    linksDb = await createLinksTestDatabase(t.database)
    linksApp = await buildLinksApp({
      config: { publicUrl: linksBase, ...(links.appLimits ? { appLimits: links.appLimits } : {}) },
      ...(links.clock ? { clock: links.clock } : {}),
      db: linksDb.db,
      verifier: restVerifier,
      mcp: { verifier: mcpVerifier, sessionSecret: 'test session secret, 32 bytes or more' },
    })
    await linksApp.listen({ port, host: '127.0.0.1' })
  }, 60_000)

  afterAll(async () => {
    await linksApp?.close()
    await restVerifier?.close()
    await mcpVerifier?.close()
    await linksDb?.close()
    await t?.close()
    await documents?.close()
  })
}

/** A user and the agent's client as the operator registers it. */
export async function preRegistered(): Promise<{
  registration: AgentRegistration & { kind: 'pre-registered' }
  email: string
}> {
  const s = await seed(t, { redirectUris: [AGENT_REDIRECT_URI, REDIRECT_URI] })
  return { registration: { kind: 'pre-registered', clientId: s.client.id }, email: s.email }
}

let published = 0
/** A user, and the agent known by its Client ID Metadata Document (no registration at all). */
export async function metadataDocument(): Promise<{ registration: AgentRegistration; email: string }> {
  const s = await seed(t)
  const path = `/agents/${++published}.json`
  const url = documents.url(path)
  documents.publish(
    path,
    clientDocument(url, { client_name: 'Test agent', redirect_uris: [AGENT_REDIRECT_URI] }),
  )
  return { registration: { kind: 'metadata-document', url }, email: s.email }
}

/**
 * A user, and an agent with neither a client_id nor a metadata document URL: the SDK registers it at
 * linkauth's registration endpoint (RFC 7591) before sending the user to authorize.
 */
export async function dynamicRegistration(): Promise<{ registration: AgentRegistration; email: string }> {
  const s = await seed(t)
  return { registration: { kind: 'dynamic' }, email: s.email }
}

/**
 * The client_id the SDK must have used: the operator's, the document's URL, or the one linkauth gave
 * at registration (the SDK keeps only the RFC 7591 fields, so the record is read from linkauth).
 */
export async function expectedClientId(registration: AgentRegistration, provider: BrowserAgentProvider) {
  if (registration.kind === 'pre-registered') return registration.clientId
  if (registration.kind === 'metadata-document') return registration.url
  const clientId = provider.clientInformation()!.client_id
  expect(clientId).toMatch(/^[\w-]{22}$/)
  const row = await t.database.db
    .selectFrom('clients')
    .select(['kind', 'name'])
    .where('id', '=', clientId)
    .executeTakeFirstOrThrow()
  expect(row).toEqual({ kind: 'dynamic', name: 'Test agent' })
  return clientId
}

/**
 * From nothing but the endpoint's URL to a connected client: the first request is refused (401), the
 * SDK finds the metadata, linkauth, and sends the user to authorize; the code finishes it.
 */
export async function connectAgent(provider: BrowserAgentProvider) {
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
  await expect(new Client({ name: 'agent', version: '1.0.0' }).connect(first)).rejects.toThrow(
    UnauthorizedError,
  )
  await first.finishAuth(provider.takeCode())
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
  const client = new Client({ name: 'agent', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

/**
 * A token for `resource` the way an ordinary app gets one (no MCP client): the user signs in and
 * allows in a browser, the app exchanges the code naming the resource, with a DPoP proof if given.
 * Also the person's browser (still signed in) and the app's client id, to revoke it on /account/apps.
 */
export async function appToken(resource: string, dpop?: string, scope = 'links:read links:write') {
  const s = await seed(t)
  const query = new URLSearchParams({ ...s.params, scope, code_challenge: CHALLENGE, resource })
  const browser = new HttpBrowser(issuer)
  const callback = await browser.signInAndAllow(`/oauth/authorize?${query}`, s.email, PASSWORD)
  const code = callback.searchParams.get('code')!
  const exchange = await fetch(`${issuer}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop ? { dpop } : {}) },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      client_id: s.client.id,
      redirect_uri: REDIRECT_URI,
      resource,
    }),
  })
  const body = (await exchange.json()) as { access_token: string; refresh_token: string; token_type: string }
  return { ...body, code, browser, clientId: s.client.id }
}

/** A raw POST to /mcp, for what the SDK client never sends. */
export async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  type RpcAnswer = { result?: Record<string, unknown>; error?: { code: number; message: string } }
  return { res, json: text ? (JSON.parse(text) as RpcAnswer) : undefined }
}

export const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}
