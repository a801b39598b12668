import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import type { ResourceVerifier } from '@linkauth/resource'
import { buildLinksApp, type LinksAppDeps } from '../src/app.js'
import type { ImportSettings } from '../src/imports/import.service.js'
import { createParty, exchangeCode } from '../../../test/helpers/fixtures.js'
import { freePort } from '../../../test/helpers/net.js'
import {
  jwksOnlyVerifier,
  type ListeningAuthServer,
  startAuthServer,
  waitFor,
} from '../../../test/helpers/resource.js'
import { registerApi } from '../../../test/helpers/resource-apis.js'
import { createLinksTestDatabase, type LinksTestDatabase } from './links-database.js'
import { type ApiAnswer, apiCall } from '../../../test/helpers/api-call.js'

/** The links API's resource identifier in these tests (tokens without `resource` carry it). */
export const LINKS_RESOURCE = 'https://links.example.com/api'
/** Its MCP endpoint's own resource identifier, registered with linkauth like any API. */
export const LINKS_MCP_RESOURCE = 'https://links.example.com/mcp'

export interface ImportTestWorld {
  server: ListeningAuthServer
  linksDb: LinksTestDatabase
  verifier: ResourceVerifier
  /** A links API listening on a real port, on the test database. */
  startLinksApi(options?: {
    imports?: Partial<ImportSettings>
    beforeImportBatchCommit?: LinksAppDeps['beforeImportBatchCommit']
    /** Serve /mcp too, for LINKS_MCP_RESOURCE. */
    mcp?: boolean
  }): Promise<{ app: FastifyInstance; base: string }>
  /** A new user's access token for the links API with these scopes. */
  tokenFor(scopes: ('links:read' | 'links:write')[]): Promise<string>
  /** A new user's access token for the MCP endpoint (aud LINKS_MCP_RESOURCE) with these scopes. */
  mcpTokenFor(scopes: ('links:read' | 'links:write')[]): Promise<string>
  close(): Promise<void>
}

/** The authorization server (real tokens, verified with its keys) and links APIs on one test database. */
export async function importTestWorld(): Promise<ImportTestWorld> {
  const server = await startAuthServer({ env: { ACCESS_TOKEN_AUDIENCE: LINKS_RESOURCE } })
  const linksDb = await createLinksTestDatabase(server.t.database)
  const verifier = await jwksOnlyVerifier(server, { resource: LINKS_RESOURCE })
  const apps: FastifyInstance[] = []
  let mcpVerifier: ResourceVerifier | undefined
  return {
    server,
    linksDb,
    verifier,
    async startLinksApi(options = {}) {
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      if (options.mcp && !mcpVerifier) {
        await registerApi(server.t, {
          name: 'Links API (MCP)',
          resource: LINKS_MCP_RESOURCE,
          scopes: ['links:read', 'links:write'],
        })
        mcpVerifier = await jwksOnlyVerifier(server, { resource: LINKS_MCP_RESOURCE })
      }
      const app = await buildLinksApp({
        config: { publicUrl: base, ...(options.imports ? { imports: options.imports } : {}) },
        db: linksDb.db,
        verifier,
        ...(options.mcp && mcpVerifier
          ? { mcp: { verifier: mcpVerifier, sessionSecret: 'test session secret, 32 bytes or more' } }
          : {}),
        ...(options.beforeImportBatchCommit
          ? { beforeImportBatchCommit: options.beforeImportBatchCommit }
          : {}),
      })
      await app.listen({ port, host: '127.0.0.1' })
      apps.push(app)
      return { app, base }
    },
    async tokenFor(scopes) {
      const party = await createParty(server.t, { grantScopes: scopes })
      return (await exchangeCode(server.t, party)).access_token
    },
    async mcpTokenFor(scopes) {
      const party = await createParty(server.t, { grantScopes: scopes })
      return (await exchangeCode(server.t, party, LINKS_MCP_RESOURCE)).access_token
    },
    async close() {
      for (const app of apps) await app.close()
      await mcpVerifier?.close()
      await verifier.close()
      await linksDb.close()
      await server.close()
    },
  }
}

export type Answer = ApiAnswer

/** A request to a links API; `body` as a string (or a stream) is sent as is, with `type`. */
export const call = (
  base: string,
  method: string,
  path: string,
  token: string | undefined,
  options: { body?: string | ReadableStream<Uint8Array>; type?: string } = {},
): Promise<Answer> => apiCall(base, method, path, token, { raw: options.body, type: options.type })

/**
 * The world of one import-*.test.ts file over HTTP: the authorization server, a links API importing
 * in batches of 50 on the test database, and a token of a user (alice) who may read and write.
 */
export async function startImportFile(): Promise<{
  w: ImportTestWorld
  app: FastifyInstance
  base: string
  alice: string
}> {
  const w = await importTestWorld()
  const { app, base } = await w.startLinksApi({ imports: { batchSize: 50 } })
  const alice = await w.tokenFor(['links:read', 'links:write'])
  return { w, app, base, alice }
}

/** The import calls of the tests, at the links API `at()` names (set once its file's world is up). */
export function importCalls(at: () => string) {
  const csv = (token: string, body: string, query = '') =>
    call(at(), 'POST', `/api/imports${query}`, token, { body, type: 'text/csv' })
  const jsonl = (token: string, body: string, query = '') =>
    call(at(), 'POST', `/api/imports${query}`, token, { body, type: 'application/x-ndjson' })

  /** Waits for the job to leave receiving/queued/running and returns it. */
  async function finished(token: string, id: string, on = at()): Promise<Record<string, unknown>> {
    return waitFor(
      async () => {
        const job = (await call(on, 'GET', `/api/imports/${id}`, token)).body
        return ['done', 'failed'].includes(String(job.state)) ? job : undefined
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `import ${id}` },
    )
  }

  async function importAndWait(token: string, upload: () => Promise<Answer>) {
    const started = await upload()
    expect(started.status, started.text).toBe(202)
    return finished(token, String(started.body.id))
  }

  async function allLinks(token: string): Promise<Record<string, unknown>[]> {
    const links: Record<string, unknown>[] = []
    let cursor: unknown = null
    do {
      const page = await call(
        at(),
        'GET',
        `/api/links?limit=100${cursor ? `&cursor=${String(cursor)}` : ''}`,
        token,
      )
      links.push(...(page.body.links as Record<string, unknown>[]))
      cursor = page.body.next_cursor
    } while (cursor)
    return links
  }

  const ownerLinkCount = async (ownerToken: string) => (await allLinks(ownerToken)).length

  return { csv, jsonl, finished, importAndWait, allLinks, ownerLinkCount }
}
