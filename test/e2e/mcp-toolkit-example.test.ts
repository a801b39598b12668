import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { PASSWORD, seed } from '../helpers/browser.js'
import { AGENT_REDIRECT_URI, BrowserAgentProvider } from '../helpers/mcp-agent.js'
import { freePort } from '../helpers/net.js'
import { installPackedResource } from '../helpers/offline-project.js'
import { registerApi } from '../helpers/resource-apis.js'

/**
 * The MCP server of packages/resource/README.md, as its code block stands, in a project of its own
 * with the packed toolkit (npm pack) and the official SDK, against a running linkauth: the README's
 * promise that those lines are a complete MCP server behind linkauth.
 */
const repoRoot = resolve(import.meta.dirname, '../..')
const packageDir = join(repoRoot, 'packages/resource')

let project: string
let t: TestApp
let server: ChildProcess | undefined
let output = ''
let mcpUrl: string

/** The README's code block under "An MCP server behind linkauth". */
async function readmeExample(): Promise<string> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## An MCP server behind linkauth'))
  const block = /```ts\n([\s\S]*?)```/.exec(section)
  if (!block) throw new Error('no code block in the README section')
  return block[1]!
}

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'linkauth-mcp-example-'))
  // The repository's locked versions, from the npm cache (no registry: test/helpers/offline-project.ts).
  await installPackedResource(project, 'an-mcp-server', [
    'jose',
    'fastify-plugin',
    '@modelcontextprotocol/sdk',
    'express',
    'zod',
  ])
  await writeFile(join(project, 'server.ts'), await readmeExample())

  const port = await freePort()
  mcpUrl = `http://127.0.0.1:${port}/mcp`
  ;({ t } = await listenTestApp())
  const credentials = await registerApi(t, { name: 'Hello', resource: mcpUrl, scopes: ['links:read'] })
  const tsx = pathToFileURL(join(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href
  server = spawn(process.execPath, ['--import', tsx, 'server.ts'], {
    cwd: project,
    env: {
      PATH: process.env.PATH,
      MCP_URL: mcpUrl,
      LINKAUTH_ISSUER: t.config.issuer,
      RS_ID: credentials.id,
      RS_SECRET: credentials.secret,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  server.stdout!.on('data', (d) => (output += d))
  server.stderr!.on('data', (d) => (output += d))
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`)).ok) break
    } catch {
      // not listening yet
    }
    if (server.exitCode !== null || i > 600) throw new Error(`the example did not start:\n${output}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}, 240_000)

afterAll(async () => {
  if (server && server.exitCode === null) server.kill('SIGTERM')
  await t?.close()
  if (project) await rm(project, { recursive: true, force: true })
})

it('is under 40 lines', async () => {
  expect((await readmeExample()).trimEnd().split('\n').length).toBeLessThan(40)
})

it('describes itself (RFC 9728) and names that document when it refuses', async () => {
  const doc = await (await fetch(mcpUrl.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'))).json()
  expect(doc).toMatchObject({
    resource: mcpUrl,
    authorization_servers: [t.config.issuer],
    scopes_supported: ['links:read'],
  })
  const refused = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' } })
  expect(refused.status).toBe(401)
  expect(refused.headers.get('www-authenticate')).toContain(
    `resource_metadata="${mcpUrl.replace('/mcp', '/.well-known/oauth-protected-resource/mcp')}"`,
  )
})

it('serves the SDK client, which found linkauth from the URL alone; refuses other tokens', async () => {
  const s = await seed(t, { redirectUris: [AGENT_REDIRECT_URI] })
  const provider = new BrowserAgentProvider(
    t.config.issuer,
    { kind: 'pre-registered', clientId: s.client.id },
    { email: s.email, password: PASSWORD },
  )
  expect(await auth(provider, { serverUrl: new URL(mcpUrl) })).toBe('REDIRECT')
  expect(provider.authorizationUrls[0]!.searchParams.get('resource')).toBe(mcpUrl)
  expect(await auth(provider, { serverUrl: new URL(mcpUrl), authorizationCode: provider.takeCode() })).toBe(
    'AUTHORIZED',
  )
  const token = provider.tokens()!.access_token
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }))
  try {
    const result = await client.callTool({ name: 'whoami', arguments: {} })
    expect(result.structuredContent).toEqual({ user: s.user.id })
  } finally {
    await client.close()
  }
  // A token that is not one of linkauth's (the toolkit's refusal, answered by the SDK's middleware).
  const forged = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token.slice(0, -4)}AAAA` },
    body: '{}',
  })
  expect(forged.status).toBe(401)
  expect(forged.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/)
})
