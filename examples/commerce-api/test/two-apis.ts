import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { expect } from 'vitest'
import { buildCommerceApp } from '../src/app.js'
import { buildLinksApp } from '../../links-api/src/app.js'
import { type ApiAnswer, apiCall } from '../../../test/helpers/api-call.js'
import { listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { freePort } from '../../../test/helpers/net.js'
import { captureLogger } from '../../../test/helpers/resource.js'
import { COMMERCE_EXAMPLE_API, LINKS_EXAMPLE_API, registerApi } from '../../../test/helpers/resource-apis.js'
import { createLinksTestDatabase } from '../../links-api/test/links-database.js'
import { createCommerceTestDatabase } from './commerce-database.js'

/** One of the two example APIs, listening: its base URL and the verifier that checks its tokens. */
export interface RunningApi {
  base: string
  verifier: ResourceVerifier
}

export interface TwoApis {
  t: TestApp
  issuer: string
  links: RunningApi
  commerce: RunningApi
  /** A call to one of the APIs with `token` as Bearer, `body` (if any) as JSON. */
  call(base: string, method: string, path: string, token: string, body?: unknown): Promise<ApiAnswer>
  /** A form-encoded request to the authorization server's token endpoint, over HTTP. */
  tokenRequest(params: Record<string, string>): Promise<{ status: number; body: Record<string, string> }>
  close(): Promise<void>
}

/**
 * The authorization server and both example APIs (links, commerce), each over real HTTP on one test
 * database. Each API is registered as the operator does (LINKS_EXAMPLE_API, COMMERCE_EXAMPLE_API:
 * its own resource identifier and scopes) and its verifier follows the revocation feed. `env` adds
 * to the authorization server's environment (its ISSUER is its own address).
 */
export async function startTwoApis(env: Record<string, string> = {}): Promise<TwoApis> {
  const closers: (() => Promise<void>)[] = []
  const close = async () => {
    for (const closer of closers.reverse()) await closer()
  }
  try {
    const { t, issuer } = await listenTestApp({ env })
    closers.push(() => t.close())
    const linksDb = await createLinksTestDatabase(t.database)
    closers.push(() => linksDb.close())
    const commerceDb = await createCommerceTestDatabase(t.database)
    closers.push(() => commerceDb.close())

    const startApi = async (
      api: { name: string; resource: string; scopes: string[] },
      build: (base: string, verifier: ResourceVerifier) => Promise<FastifyInstance>,
    ): Promise<RunningApi> => {
      const verifier = await createResourceVerifier({
        issuer,
        resource: api.resource,
        credentials: await registerApi(t, api),
        logger: captureLogger().logger,
      })
      closers.push(() => verifier.close())
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const app = await build(base, verifier)
      closers.push(() => app.close())
      await app.listen({ port, host: '127.0.0.1' })
      return { base, verifier }
    }
    const links = await startApi(LINKS_EXAMPLE_API, (base, verifier) =>
      buildLinksApp({ config: { publicUrl: base }, db: linksDb.db, verifier }),
    )
    const commerce = await startApi(COMMERCE_EXAMPLE_API, (base, verifier) =>
      buildCommerceApp({ config: { publicUrl: base }, db: commerceDb.db, verifier }),
    )

    const tokenRequest: TwoApis['tokenRequest'] = async (params) => {
      const res = await fetch(`${issuer}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(params),
      })
      return { status: res.status, body: (await res.json()) as Record<string, string> }
    }
    return {
      t,
      issuer,
      links,
      commerce,
      call: (base, method, path, token, body) => apiCall(base, method, path, token, { json: body }),
      tokenRequest,
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}

/**
 * Calls `probe` until the API refuses (401 invalid_token) and returns the milliseconds from `since`
 * to that refusal; fails when none came within two seconds of `since`.
 */
export async function refusedSince(
  probe: () => Promise<{ status: number; body: Record<string, unknown> }>,
  since = performance.now(),
): Promise<number> {
  const answers: number[] = []
  while (performance.now() - since < 2000) {
    const res = await probe()
    answers.push(res.status)
    if (res.status === 401) {
      expect(res.body.error).toBe('invalid_token')
      return performance.now() - since
    }
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`never refused: ${answers.join(', ')}`)
}
