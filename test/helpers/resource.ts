import {
  createResourceVerifier,
  type ResourceVerifier,
  type ResourceVerifierOptions,
} from '@linkauth/resource'
import { signJwt } from '../../src/tokens/access-token.js'
import { buildTestApp, type TestApp, type TestAppOptions } from './app.js'
import { exchangeCode, jwtClaims, type Party } from './fixtures.js'
import { freePort } from './net.js'
import { type HttpProxy, startHttpProxy } from './http-proxy.js'

/**
 * The authorization server as a resource API meets it: listening on a real port, behind an HTTP proxy
 * a test can cut (the issuer URL is the proxy's, so discovery, keys, introspection and the feed all
 * go through it).
 */
export interface ListeningAuthServer {
  t: TestApp
  issuer: string
  proxy: HttpProxy
  close(): Promise<void>
}

export async function startAuthServer(options: TestAppOptions = {}): Promise<ListeningAuthServer> {
  const serverPort = await freePort()
  const proxy = await startHttpProxy(serverPort)
  const issuer = `http://127.0.0.1:${proxy.port}`
  const t = await buildTestApp({ ...options, env: { ISSUER: issuer, ...options.env } })
  await t.app.listen({ port: serverPort, host: '127.0.0.1' })
  return {
    t,
    issuer,
    proxy,
    close: async () => {
      await proxy.close()
      await t.close()
    },
  }
}

/**
 * A verifier of the server's tokens with its keys alone (no feed, no introspection), for the
 * server's default audience unless `resource` (or its old name `audience`) names another API.
 */
export function jwksOnlyVerifier(
  server: ListeningAuthServer,
  options: Partial<ResourceVerifierOptions> = {},
) {
  const { resource, audience, ...rest } = options
  return createResourceVerifier({
    issuer: server.issuer,
    revocationFeed: false,
    // The default audience is no registered resource, which the verifier warns of at start.
    logger: captureLogger().logger,
    ...rest,
    resource: resource ?? audience ?? server.t.config.accessTokenAudience,
  })
}

/** Requests the server answered on a route (its own metrics count them), e.g. '/api/oauth/introspect'. */
export async function requestsServed(t: TestApp, route: string): Promise<number> {
  const { values } = await t.services.metrics.httpRequests.get()
  return values
    .filter((v) => v.labels.listener === 'public' && v.labels.route === route)
    .reduce((sum, v) => sum + v.value, 0)
}

/** Polls `check` until it returns something other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 20, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

/** Resolves with the error code once the verifier refuses the token (polling, never a fixed sleep). */
export function refusal(v: ResourceVerifier, token: string, timeoutMs = 1_000): Promise<string> {
  return waitFor(
    () =>
      v.verify(token).then(
        () => false,
        (err: { code: string }) => err.code,
      ),
    { timeoutMs, intervalMs: 5, what: 'the token to be refused' },
  )
}

/** A real access token for the party (code exchange through the token endpoint). */
export async function accessToken(t: TestApp, party: Party): Promise<string> {
  return (await exchangeCode(t, party)).access_token
}

/**
 * A token signed with the server's active key, with a real token's claims changed as given (a
 * member set to undefined is left out): for the cases the token endpoint never produces.
 */
export function resignedToken(
  t: TestApp,
  realToken: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = { typ: 'at+jwt' },
): string {
  const merged = { ...jwtClaims(realToken), ...claims }
  const payload = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined))
  return signJwt(header, payload, t.services.signingKeys.activeSigningKey())
}

export const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Collects what the verifier logs, to assert on mode switches. */
export function captureLogger() {
  const lines: { level: 'info' | 'warn' | 'error'; msg: string | undefined; o: object }[] = []
  return {
    lines,
    logger: {
      info: (o: object, msg?: string) => lines.push({ level: 'info', msg, o }),
      warn: (o: object, msg?: string) => lines.push({ level: 'warn', msg, o }),
      error: (o: object, msg?: string) => lines.push({ level: 'error', msg, o }),
    },
  }
}
