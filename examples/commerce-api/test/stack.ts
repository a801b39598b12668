import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { buildCommerceApp } from '../src/app.js'
import type { AppLimits } from '../../shared/app-leash.js'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createParty, exchangeCode, type Party } from '../../../test/helpers/fixtures.js'
import { freePort } from '../../../test/helpers/net.js'
import { captureLogger } from '../../../test/helpers/resource.js'
import { createResourceServer, type ResourceServerCredentials } from '../../../test/helpers/tokens.js'
import { type CommerceTestDatabase, createCommerceTestDatabase } from './commerce-database.js'
import { type ApiAnswer, apiCall } from '../../../test/helpers/api-call.js'

/**
 * The commerce API's resource identifier in tests. Tokens without a `resource` carry the server's
 * ACCESS_TOKEN_AUDIENCE, set to it here, so the code exchange of the fixtures yields tokens for it.
 */
export const COMMERCE_RESOURCE = 'https://commerce.example.com/api'

/** A clock the test moves: the commerce API's idea of now (tokens keep real time). */
export function settableClock(start = new Date()) {
  let now = start
  return {
    now: () => now,
    set: (date: Date) => {
      now = date
    },
    advance: (ms: number) => {
      now = new Date(now.getTime() + ms)
    },
  }
}

export type Answer = ApiAnswer

export interface CommerceStack {
  t: TestApp
  issuer: string
  rs: ResourceServerCredentials
  db: CommerceTestDatabase
  verifier: ResourceVerifier
  app: FastifyInstance
  base: string
  clock: ReturnType<typeof settableClock>
  api(
    method: string,
    path: string,
    token: string | undefined,
    body?: unknown,
    options?: { headers?: Record<string, string>; base?: string },
  ): Promise<Answer>
  /** An access token for the commerce API from the real token endpoint, for a new user (or `party`). */
  tokenFor(
    scopes: ('ecommerce:write' | 'products:sync')[],
    party?: Party,
  ): Promise<{ token: string; party: Party }>
  close(): Promise<void>
}

/** The authorization server and the commerce API, each over real HTTP, on one test database. */
/** `appLimits`: the leash on applications by standing (default: the API's defaults). */
export async function startCommerceStack(options: { appLimits?: AppLimits } = {}): Promise<CommerceStack> {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const t = await buildTestApp({ env: { ISSUER: issuer, ACCESS_TOKEN_AUDIENCE: COMMERCE_RESOURCE } })
  await t.app.listen({ port, host: '127.0.0.1' })
  const rs = await createResourceServer(t)
  const db = await createCommerceTestDatabase(t.database)
  const verifier = await createResourceVerifier({
    issuer,
    resource: COMMERCE_RESOURCE,
    credentials: rs,
    logger: captureLogger().logger,
  })
  const commercePort = await freePort()
  const base = `http://127.0.0.1:${commercePort}`
  const clock = settableClock()
  const config = { publicUrl: base, ...(options.appLimits ? { appLimits: options.appLimits } : {}) }
  const app = await buildCommerceApp({ config, db: db.db, verifier, clock })
  await app.listen({ port: commercePort, host: '127.0.0.1' })

  const api: CommerceStack['api'] = (method, path, token, body, options = {}) =>
    apiCall(options.base ?? base, method, path, token, { json: body, headers: options.headers })
  const tokenFor: CommerceStack['tokenFor'] = async (scopes, party) => {
    const p = party ?? (await createParty(t, { grantScopes: scopes }))
    return { token: (await exchangeCode(t, p)).access_token, party: p }
  }
  return {
    t,
    issuer,
    rs,
    db,
    verifier,
    app,
    base,
    clock,
    api,
    tokenFor,
    close: async () => {
      await app.close()
      await verifier.close()
      await db.close()
      await t.close()
    },
  }
}
