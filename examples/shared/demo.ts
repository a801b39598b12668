/**
 * What the example APIs' demos share (`npm run links-api:demo`, `npm run commerce-api:demo`): start
 * processes and wait for them, find or start the authorization server, register the API as a
 * resource server once and keep its credentials, call the API.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { adminToken, adminUrl, CliError, createAdminClient } from '../../src/cli/admin-client.js'
import {
  dataDirOf,
  type Metadata,
  metadata,
  runAuthorizationFlow,
  say,
} from '../../scripts/authorization-flow.js'

const children: ChildProcess[] = []

export async function waitUntilReady(url: string, child: ChildProcess, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok) return
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new CliError(`${what} exited with code ${child.exitCode}`, 1)
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new CliError(`${what} did not become ready at ${url}`, 1)
}

/** A node process of the demo, stopped with the others by stopAll. */
export function start(args: string[], childEnv: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'inherit', 'inherit'] })
  children.push(child)
  return child
}

/** Stops every process the demo started; Ctrl-C and SIGTERM do it too. */
export function stopAll(code: number): void {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
  process.exitCode = code
}

/** The authorization server already running at `publicUrl`, or a new one started from dist/. */
export async function authorizationServer(
  publicUrl: string,
  env: NodeJS.ProcessEnv,
  dataDir: string,
): Promise<Metadata> {
  try {
    const meta = await metadata(publicUrl)
    say(`Using the authorization server already running at ${meta.issuer}`)
    return meta
  } catch {
    if (!existsSync('dist/src/main.js')) throw new CliError('dist/ is missing: run npm run build first', 2)
    say(
      `Starting the authorization server at ${publicUrl} (${env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL in ${dataDir}`}) …`,
    )
    const child = start(['dist/src/main.js'], { ...env, LOG_LEVEL: env.LOG_LEVEL || 'warn' })
    await waitUntilReady(`${publicUrl}/readyz`, child, 'the authorization server')
    return metadata(publicUrl)
  }
}

/**
 * The API's resource-server credentials: given, kept from an earlier run in
 * `$dataDir/<key>-resource-server.json` (mode 0600), or registered now with its identifier and scopes.
 */
export async function resourceServer(options: {
  request: ReturnType<typeof createAdminClient>
  given: { id: string | undefined; secret: string | undefined }
  dataDir: string
  /** `links-api`: the kept file's name. */
  key: string
  /** `Links API`: its registered name. */
  name: string
  /** `the links API`: in sentences. */
  label: string
  resource: string
  scopes: string[]
}): Promise<{ id: string; secret: string }> {
  const { request, dataDir } = options
  if (options.given.id && options.given.secret) return { id: options.given.id, secret: options.given.secret }
  const file = join(dataDir, `${options.key}-resource-server.json`)
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { id: string; secret: string }
    const { resource_servers } = await request<{
      resource_servers: { id: string; resource?: string | null }[]
    }>('GET', '/admin/resource-servers')
    // A registration for another identifier (another port) or from before resource identifiers is not this API's.
    if (resource_servers.some((r) => r.id === kept.id && r.resource === options.resource)) {
      say(`Using the resource-server registration kept in ${file} (${kept.id})`)
      return kept
    }
  }
  const created = await request<{ id: string; secret: string }>('POST', '/admin/resource-servers', {
    name: options.name,
    resource: options.resource,
    scopes: options.scopes,
  })
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(file, JSON.stringify({ id: created.id, secret: created.secret }), { mode: 0o600 })
  chmodSync(file, 0o600)
  say(`Registered ${options.label} as resource server ${created.id} (credentials kept in ${file}, mode 0600)`)
  say(`   resource: ${options.resource}, scopes: ${options.scopes.join(' ')}`)
  return created
}

/** A call to the API with the token; JSON answers parsed. */
export function apiClient(baseUrl: string) {
  return async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    })
    const text = await res.text()
    return {
      status: res.status,
      headers: res.headers,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      json: (text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined) as any,
    }
  }
}

/** JSON for the terminal, indented under a numbered step. */
export const indent = (value: unknown) => JSON.stringify(value, null, 2).replace(/\n/g, '\n   ')

/** One example API as a demo runs it. */
export interface DemoApi {
  /** `links-api`: its folder under examples/, its kept files' prefix. */
  dir: 'links-api' | 'commerce-api'
  /** `LINKS`: the prefix of its settings. */
  prefix: 'LINKS' | 'COMMERCE'
  defaultPort: number
  /** `Links API`: its registered name. */
  name: string
  /** `the links API`: in sentences. */
  label: string
  scopes: string[]
  /** The demo application's name on the consent page. */
  appName: string
  /**
   * An MCP endpoint the API serves at `path` with its own registration (the links API's /mcp): its
   * registered name, and the settings prefix of its identifier and credentials (`LINKS_MCP`).
   */
  mcp?: { path: string; name: string; prefix: string }
}

/**
 * Where a demo's services are: the authorization server (LINKAUTH_URL, or where one started with the
 * same PORT/ISSUER listens), the data folder, and the API's port, public URL and resource identifier
 * (its tokens' aud: the API's own default unless `<PREFIX>_API_RESOURCE` says otherwise).
 */
export function demoPlaces(env: NodeJS.ProcessEnv, api: DemoApi) {
  const publicUrl = (env.LINKAUTH_URL || env.ISSUER || `http://localhost:${env.PORT || 3000}`).replace(
    /\/$/,
    '',
  )
  const port = Number(env[`${api.prefix}_PORT`] || api.defaultPort)
  const url = (env[`${api.prefix}_PUBLIC_URL`] || `http://localhost:${port}`).replace(/\/$/, '')
  const resource = env[`${api.prefix}_API_RESOURCE`] || `${url}/api`
  return { publicUrl, dataDir: dataDirOf(env), port, url, resource }
}

/**
 * A demo's first steps, the same for every API: find or start the authorization server, register the
 * API as a resource server (once), start the API beside it, and get a token for it (resource=, the
 * API's scopes) from a person's consent in a browser. The token is kept in
 * `$DATA_DIR/<dir>-demo-token` (mode 0600) and never printed. Answers the exit code instead when the
 * person denies or the token endpoint refuses.
 */
export async function startDemo(
  env: NodeJS.ProcessEnv,
  api: DemoApi,
): Promise<
  | {
      token: string
      tokenFile: string
      meta: Metadata
      credentials: { id: string; secret: string }
      /** The MCP endpoint's resource identifier, when the API has one. */
      mcpResource: string | undefined
    }
  | { exitCode: number }
> {
  const places = demoPlaces(env, api)
  const meta = await authorizationServer(places.publicUrl, env, places.dataDir)
  const request = createAdminClient({ baseUrl: adminUrl(env), token: adminToken(env) })
  const credentials = await resourceServer({
    request,
    given: {
      id: env[`${api.prefix}_RESOURCE_SERVER_ID`],
      secret: env[`${api.prefix}_RESOURCE_SERVER_SECRET`],
    },
    dataDir: places.dataDir,
    key: api.dir,
    name: api.name,
    label: api.label,
    resource: places.resource,
    scopes: api.scopes,
  })

  // The MCP endpoint is its own resource (its own audience), registered like any API.
  const mcpResource = api.mcp && (env[`${api.mcp.prefix}_RESOURCE`] || `${places.url}${api.mcp.path}`)
  const mcpCredentials =
    api.mcp &&
    (await resourceServer({
      request,
      given: {
        id: env[`${api.mcp.prefix}_RESOURCE_SERVER_ID`],
        secret: env[`${api.mcp.prefix}_RESOURCE_SERVER_SECRET`],
      },
      dataDir: places.dataDir,
      key: `${api.dir}-mcp`,
      name: api.mcp.name,
      label: `its MCP endpoint`,
      resource: mcpResource!,
      scopes: api.scopes,
    }))

  say(`Starting ${api.label} at ${places.url} …`)
  const child = start(
    ['--conditions=linkauth-source', '--import', 'tsx', `examples/${api.dir}/src/main.ts`],
    {
      ...env,
      [`${api.prefix}_PORT`]: String(places.port),
      [`${api.prefix}_PUBLIC_URL`]: places.url,
      [`${api.prefix}_API_RESOURCE`]: places.resource,
      LINKAUTH_ISSUER: meta.issuer,
      [`${api.prefix}_RESOURCE_SERVER_ID`]: credentials.id,
      [`${api.prefix}_RESOURCE_SERVER_SECRET`]: credentials.secret,
      [`${api.prefix}_LOG_LEVEL`]: env[`${api.prefix}_LOG_LEVEL`] || 'warn',
      ...(api.mcp && mcpCredentials
        ? {
            [`${api.mcp.prefix}_RESOURCE`]: mcpResource,
            [`${api.mcp.prefix}_RESOURCE_SERVER_ID`]: mcpCredentials.id,
            [`${api.mcp.prefix}_RESOURCE_SERVER_SECRET`]: mcpCredentials.secret,
          }
        : {}),
    },
  )
  await waitUntilReady(`${places.url}/readyz`, child, api.label)
  say(
    `Both services are running: authorization server ${meta.issuer}, ${api.label.replace(/^the /, '')} ${places.url}`,
  )
  say()

  const flow = await runAuthorizationFlow({
    meta,
    request,
    appName: api.appName,
    port: Number(env.DEMO_PORT || 0),
    timeoutSeconds: Number(env.DEMO_TIMEOUT || 600),
    dataDir: places.dataDir,
    // A token for this API alone: its aud is the API's identifier.
    resource: places.resource,
    scopes: api.scopes,
  })
  if (flow.outcome === 'denied') return { exitCode: 1 }
  const token = flow.body.access_token
  if (!flow.response.ok || typeof token !== 'string') {
    say(`5. The token endpoint refused (${flow.response.status}): ${JSON.stringify(flow.body)}`)
    return { exitCode: 1 }
  }
  const tokenFile = join(places.dataDir, `${api.dir}-demo-token`)
  writeFileSync(tokenFile, token, { mode: 0o600 })
  chmodSync(tokenFile, 0o600)
  say(`5. Received an access token for ${api.scopes.join(' ')} (kept in ${tokenFile}, mode 0600; not shown)`)
  return { token, tokenFile, meta, credentials, mcpResource }
}

/** Throws (exit 1) when a call of the demo did not answer `status`, with what it answered instead. */
export function expectStatus(what: string, res: { status: number; json: unknown }, status: number): void {
  if (res.status !== status)
    throw new CliError(`${what} answered ${res.status}: ${JSON.stringify(res.json)}`, 1)
}

/**
 * Runs a demo's `main` as the process: its exit code, a thrown error's message prefixed with `name`
 * (exit 1); Ctrl-C and SIGTERM stop every process it started.
 */
export async function runDemo(name: string, main: () => Promise<number>): Promise<void> {
  process.on('SIGINT', () => stopAll(0))
  process.on('SIGTERM', () => stopAll(0))
  try {
    const code = await main()
    if (code !== 0) stopAll(code)
  } catch (err) {
    process.stderr.write(`${name}: ${(err as Error).message}\n`)
    stopAll(1)
  }
}
