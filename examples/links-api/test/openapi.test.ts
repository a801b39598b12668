import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { linksOpenApiDocument } from '../src/openapi.js'
import {
  checkResponse,
  createValidator,
  documentedOperations,
  type OpenApiDocument,
  registeredRoutes,
} from '../../../test/helpers/openapi.js'
import { waitFor } from '../../../test/helpers/resource.js'
import { type ImportTestWorld, importTestWorld } from './import-setup.js'

/**
 * The links API's OpenAPI document against its real answers: every answer below is validated
 * against the schema of its documented status and media type; every route is documented and every
 * documented operation is exercised; Redocly's recommended rules pass.
 */
let w: ImportTestWorld
let app: FastifyInstance
let doc: OpenApiDocument
let token: string
let reader: string
const ajv = createValidator()
const exercised = new Set<string>()

beforeAll(async () => {
  w = await importTestWorld()
  ;({ app } = await w.startLinksApi({ imports: { maxRows: 5 }, mcp: true }))
  doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  token = await w.tokenFor(['links:read', 'links:write'])
  reader = await w.tokenFor(['links:read'])
})
afterAll(async () => w?.close())

async function check(
  operation: string,
  request: Omit<InjectOptions, 'method'> & { token?: string | undefined },
  expectedStatus: number,
): Promise<LightMyRequestResponse> {
  const [method] = operation.split(' ') as [InjectOptions['method']]
  const { token: bearer, headers, ...rest } = request
  const res = await app.inject({
    method,
    ...rest,
    headers: { ...headers, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
  } as InjectOptions)
  expect(res.statusCode, `${operation}: ${res.body}`).toBe(expectedStatus)
  expect(checkResponse(doc, ajv, operation, res)).toEqual([])
  exercised.add(operation)
  return res
}

const json = (body: unknown) => ({
  payload: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
})
const csv = (body: string) => ({ payload: body, headers: { 'content-type': 'text/csv' } })

it('serves itself as OpenAPI 3.1 with the public URL as its server', async () => {
  const res = await check('GET /openapi.json', { url: '/openapi.json' }, 200)
  expect(res.json()).toMatchObject({ openapi: '3.1.0', info: { title: 'Links API' } })
})

describe('links', () => {
  it('create, list, read, change, stats, tags, delete, and their refusals', async () => {
    const created = await check(
      'POST /api/links',
      {
        url: '/api/links',
        token,
        ...json({ target_url: 'https://oa.example/', slug: 'oa-doc', tags: ['x'] }),
      },
      201,
    )
    const id = String(created.json().id)
    await check('POST /api/links', { url: '/api/links', token, ...json({ target_url: 'ftp://x' }) }, 400)
    await check('POST /api/links', { url: '/api/links', ...json({ target_url: 'https://x.example/' }) }, 401)
    await check(
      'POST /api/links',
      { url: '/api/links', token: reader, ...json({ target_url: 'https://x.example/' }) },
      403,
    )
    await check(
      'POST /api/links',
      { url: '/api/links', token, ...json({ target_url: 'https://x.example/', slug: 'OA-doc' }) },
      409,
    )
    await check(
      'POST /api/links',
      {
        url: '/api/links',
        token,
        payload: 'a=b',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      415,
    )
    await check(
      'POST /api/links',
      { url: '/api/links', token, ...json({ target_url: `https://x.example/${'a'.repeat(20_000)}` }) },
      413,
    )
    await check('GET /api/links', { url: '/api/links?limit=5', token }, 200)
    await check('GET /api/links', { url: '/api/links?limit=0', token }, 400)
    await check('GET /api/links', { url: '/api/links', token: 'nonsense' }, 401)
    await check('GET /api/links', { url: '/api/links', token: await w.tokenFor(['links:write']) }, 403)
    await check('GET /api/links/{id}', { url: `/api/links/${id}`, token }, 200)
    await check('GET /api/links/{id}', { url: `/api/links/${id}` }, 401)
    await check('GET /api/links/{id}', { url: '/api/links/nothing', token }, 404)
    await check(
      'GET /api/links/{id}',
      { url: `/api/links/${id}`, token: await w.tokenFor(['links:write']) },
      403,
    )
    await check('PATCH /api/links/{id}', { url: `/api/links/${id}`, token, ...json({ tags: ['y'] }) }, 200)
    await check('PATCH /api/links/{id}', { url: `/api/links/${id}`, token, ...json({}) }, 400)
    await check('PATCH /api/links/{id}', { url: `/api/links/${id}`, ...json({ tags: [] }) }, 401)
    await check(
      'PATCH /api/links/{id}',
      { url: `/api/links/${id}`, token: reader, ...json({ tags: [] }) },
      403,
    )
    await check('PATCH /api/links/{id}', { url: '/api/links/nothing', token, ...json({ tags: [] }) }, 404)
    await check('GET /api/links/{id}/stats', { url: `/api/links/${id}/stats`, token }, 200)
    await check('GET /api/links/{id}/stats', { url: `/api/links/${id}/stats?from=x`, token }, 400)
    await check('GET /api/links/{id}/stats', { url: `/api/links/${id}/stats` }, 401)
    await check(
      'GET /api/links/{id}/stats',
      { url: `/api/links/${id}/stats`, token: await w.tokenFor(['links:write']) },
      403,
    )
    await check('GET /api/links/{id}/stats', { url: '/api/links/nothing/stats', token }, 404)
    await check('GET /api/tags', { url: '/api/tags', token }, 200)
    await check('GET /api/tags', { url: '/api/tags' }, 401)
    await check('GET /api/tags', { url: '/api/tags', token: await w.tokenFor(['links:write']) }, 403)
    await check('GET /{slug}', { url: '/oa-doc' }, 302)
    await check('GET /{slug}', { url: '/no-such-slug' }, 404)
    await check('DELETE /api/links/{id}', { url: `/api/links/${id}` }, 401)
    await check('DELETE /api/links/{id}', { url: `/api/links/${id}`, token: reader }, 403)
    await check('DELETE /api/links/{id}', { url: `/api/links/${id}`, token }, 204)
    await check('DELETE /api/links/{id}', { url: `/api/links/${id}`, token }, 404)
  })
})

describe('imports', () => {
  it('dry run, job, progress, report, resume, and their refusals', async () => {
    const file = 'url,slug\nhttps://oi.example/1,oa-imp1\nftp://bad,\n'
    await check('POST /api/imports', { url: '/api/imports?dry_run=true', token, ...csv(file) }, 200)
    const started = await check('POST /api/imports', { url: '/api/imports', token, ...csv(file) }, 202)
    const id = String(started.json().id)
    await check('POST /api/imports', { url: '/api/imports', token, ...csv('nothing,here\n1,2\n') }, 400)
    await check('POST /api/imports', { url: '/api/imports', ...csv(file) }, 401)
    await check('POST /api/imports', { url: '/api/imports', token: reader, ...csv(file) }, 403)
    await check(
      'POST /api/imports',
      { url: '/api/imports', token, ...csv(`url\n${'https://x.example/\n'.repeat(6)}`) },
      413,
    )
    await check(
      'POST /api/imports',
      { url: '/api/imports', token, ...json({ url: 'https://x.example/' }) },
      415,
    )
    await waitFor(
      async () =>
        (
          await app.inject({
            method: 'GET',
            url: `/api/imports/${id}`,
            headers: { authorization: `Bearer ${token}` },
          })
        ).json().state === 'done',
      {
        timeoutMs: 20_000,
        what: 'the import',
      },
    )
    await check('GET /api/imports', { url: '/api/imports', token }, 200)
    await check('GET /api/imports', { url: '/api/imports' }, 401)
    await check('GET /api/imports', { url: '/api/imports', token: reader }, 403)
    await check('GET /api/imports/{id}', { url: `/api/imports/${id}`, token }, 200)
    await check('GET /api/imports/{id}', { url: `/api/imports/${id}` }, 401)
    await check('GET /api/imports/{id}', { url: `/api/imports/${id}`, token: reader }, 403)
    await check(
      'GET /api/imports/{id}',
      { url: `/api/imports/${id}`, token: await w.tokenFor(['links:write']) },
      404,
    )
    const report = await check(
      'GET /api/imports/{id}/report',
      { url: `/api/imports/${id}/report`, token },
      200,
    )
    expect(report.json().problems).toHaveLength(1)
    await check('GET /api/imports/{id}/report', { url: `/api/imports/${id}/report?after=x`, token }, 400)
    await check('GET /api/imports/{id}/report', { url: `/api/imports/${id}/report` }, 401)
    await check('GET /api/imports/{id}/report', { url: `/api/imports/${id}/report`, token: reader }, 403)
    await check('GET /api/imports/{id}/report', { url: '/api/imports/nothing/report', token }, 404)
    await check('POST /api/imports/{id}/resume', { url: `/api/imports/${id}/resume`, token }, 409)
    await check('POST /api/imports/{id}/resume', { url: `/api/imports/${id}/resume` }, 401)
    await check('POST /api/imports/{id}/resume', { url: `/api/imports/${id}/resume`, token: reader }, 403)
    await check('POST /api/imports/{id}/resume', { url: '/api/imports/nothing/resume', token }, 404)
    // A job that failed: resumed (202).
    await w.linksDb.db.updateTable('import_jobs').set({ state: 'failed' }).where('id', '=', id).execute()
    await check('POST /api/imports/{id}/resume', { url: `/api/imports/${id}/resume`, token }, 202)
    await app.importRunner.idle()
  })
})

describe('the MCP endpoint', () => {
  const accept = 'application/json, text/event-stream'
  const rpc = (body: unknown, headers: Record<string, string> = {}) => ({
    url: '/mcp',
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { accept, 'content-type': 'application/json', ...headers },
  })
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'doc', version: '1' } },
  }
  const call = (name: string, args: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name, arguments: args },
  })

  it('JSON-RPC over POST, its refusals, GET and DELETE refused, and its metadata', async () => {
    const mcpToken = await w.mcpTokenFor(['links:read', 'links:write'])
    const mcpReader = await w.mcpTokenFor(['links:read'])
    const started = await check('POST /mcp', { ...rpc(initialize), token: mcpToken }, 200)
    const session = {
      'mcp-session-id': String(started.headers['mcp-session-id']),
      'mcp-protocol-version': '2025-11-25',
    }
    const created = await check(
      'POST /mcp',
      { ...rpc(call('create_link', { target_url: 'https://oa.example/mcp' }), session), token: mcpToken },
      200,
    )
    expect(created.json().result.structuredContent).toMatchObject({ target_url: 'https://oa.example/mcp' })
    const found = await check(
      'POST /mcp',
      {
        ...rpc([call('list_links', { q: 'oa.example/MCP' }), { ...call('list_tags', {}), id: 3 }], session),
        token: mcpToken,
      },
      200,
    )
    expect(found.json()).toHaveLength(2)
    await check(
      'POST /mcp',
      { ...rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, session), token: mcpToken },
      202,
    )
    await check('POST /mcp', { ...rpc(call('list_tags', {})), token: mcpToken }, 400)
    await check('POST /mcp', { ...rpc('{not json', session), token: mcpToken }, 400)
    await check('POST /mcp', rpc(initialize), 401)
    await check('POST /mcp', { ...rpc(initialize), token: 'nonsense' }, 401)
    const readerStarted = await check('POST /mcp', { ...rpc(initialize), token: mcpReader }, 200)
    const readerSession = {
      'mcp-session-id': String(readerStarted.headers['mcp-session-id']),
      'mcp-protocol-version': '2025-11-25',
    }
    const stepUp = await check(
      'POST /mcp',
      {
        ...rpc(call('create_link', { target_url: 'https://oa.example/x' }), readerSession),
        token: mcpReader,
      },
      403,
    )
    expect(stepUp.json()).toMatchObject({ error: 'insufficient_scope' })
    const foreign = await check(
      'POST /mcp',
      { ...rpc(initialize, { origin: 'http://evil.example' }), token: mcpToken },
      403,
    )
    expect(foreign.json()).toMatchObject({ id: null, error: { code: -32000 } })
    await check(
      'POST /mcp',
      { ...rpc(call('list_tags', {}), { ...session, 'mcp-session-id': 'made-up' }), token: mcpToken },
      404,
    )
    // Revision 2026-07-28: stateless, each request with its _meta and headers.
    const stateless = (method: string, params: Record<string, unknown> = {}) =>
      rpc(
        {
          jsonrpc: '2.0',
          id: 9,
          method,
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method },
      )
    const discovered = await check('POST /mcp', { ...stateless('server/discover'), token: mcpToken }, 200)
    expect(discovered.json().result).toMatchObject({ supportedVersions: ['2026-07-28'] })
    const removed = await check('POST /mcp', { ...stateless('ping'), token: mcpToken }, 404)
    expect(removed.json()).toMatchObject({ id: 9, error: { code: -32601 } })
    const noName = await check(
      'POST /mcp',
      { ...stateless('tools/call', { name: 'list_tags', arguments: {} }), token: mcpToken },
      400,
    )
    expect(noName.json()).toMatchObject({ id: 9, error: { code: -32020 } })
    await check('POST /mcp', { ...rpc(initialize, { accept: 'application/json' }), token: mcpToken }, 406)
    await check(
      'POST /mcp',
      { ...rpc({ ...initialize, params: { pad: 'x'.repeat(70 * 1024) } }), token: mcpToken },
      413,
    )
    await check(
      'POST /mcp',
      { ...rpc('a=b', { 'content-type': 'application/x-www-form-urlencoded' }), token: mcpToken },
      415,
    )
    for (const method of ['GET', 'DELETE']) {
      await check(`${method} /mcp`, { url: '/mcp' }, 401)
      await check(
        `${method} /mcp`,
        { url: '/mcp', headers: { origin: 'http://evil.example' }, token: mcpToken },
        403,
      )
      const refused = await check(`${method} /mcp`, { url: '/mcp', headers: session, token: mcpToken }, 405)
      expect(refused.headers.allow).toBe('POST')
    }
    await check(
      'GET /.well-known/oauth-protected-resource/mcp',
      { url: '/.well-known/oauth-protected-resource/mcp' },
      200,
    )
  })
})

describe('discovery and health', () => {
  it('metadata, liveness, readiness', async () => {
    await check(
      'GET /.well-known/oauth-protected-resource/api',
      { url: '/.well-known/oauth-protected-resource/api' },
      200,
    )
    await check('GET /healthz', { url: '/healthz' }, 200)
    await check('GET /readyz', { url: '/readyz' }, 200)
  })
})

describe('coverage', () => {
  it('every route is documented, every documented operation exists and was checked above', () => {
    const documented = new Set(documentedOperations(doc))
    expect(registeredRoutes(app).filter((r) => !documented.has(r))).toEqual([])
    const registered = new Set(registeredRoutes(app))
    expect([...documented].filter((op) => !registered.has(op))).toEqual([])
    expect([...documented].filter((op) => !exercised.has(op))).toEqual([])
  })

  it('passes Redocly’s recommended rules, and the lint fails a broken copy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'links-openapi-'))
    try {
      const lint = (document: object) => {
        const file = join(dir, 'links.openapi.json')
        writeFileSync(file, JSON.stringify(document))
        const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/lint-openapi.ts', file], {
          encoding: 'utf8',
        })
        return { status: run.status, output: `${run.stdout}${run.stderr}` }
      }
      const good = lint(linksOpenApiDocument('http://localhost:3002', { mcp: true }))
      expect(good.status, good.output).toBe(0)
      const broken = linksOpenApiDocument('http://localhost:3002') as {
        paths: Record<string, Record<string, object>>
      }
      const { summary: _summary, ...rest } = broken.paths['/api/imports']!.post as { summary: string }
      broken.paths['/api/imports']!.post = rest
      const bad = lint(broken)
      expect(bad.status).not.toBe(0)
      expect(bad.output).toContain('operation-summary')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
