/** A small client of the admin API; every failure becomes a CliError with the exit code to use. */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const EXIT_OK = 0
export const EXIT_REFUSED = 1
export const EXIT_USAGE = 2

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
  }
}

/**
 * The admin API's address: LINKAUTH_ADMIN_URL, or where a server started with this environment
 * listens (ADMIN_HOST, ADMIN_PORT). A wildcard host (all addresses) is reached on loopback.
 */
export function adminUrl(env: NodeJS.ProcessEnv): string {
  if (env.LINKAUTH_ADMIN_URL) return env.LINKAUTH_ADMIN_URL
  const configured = env.ADMIN_HOST || '127.0.0.1'
  const host = ['0.0.0.0', '::', '[::]'].includes(configured) ? '127.0.0.1' : configured
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  return `http://${bracketed}:${env.ADMIN_PORT || '3001'}`
}

/** The admin token: ADMIN_TOKEN, or the file the server wrote into DATA_DIR (default ./.data). */
export function adminToken(env: NodeJS.ProcessEnv): string | undefined {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN
  const path = join(env.DATA_DIR || './.data', 'admin-token')
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined
}

export interface AdminClientOptions {
  baseUrl: string
  token: string | undefined
  fetch?: typeof fetch
}

export function createAdminClient(options: AdminClientOptions) {
  const doFetch = options.fetch ?? fetch
  return async function request<T>(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = 15_000,
  ): Promise<T> {
    if (!options.token) {
      throw new CliError(
        'no admin token: set ADMIN_TOKEN, or run on the server host where DATA_DIR/admin-token exists',
        EXIT_USAGE,
      )
    }
    let response: Response
    try {
      response = await doFetch(new URL(path, options.baseUrl), {
        method,
        headers: {
          authorization: `Bearer ${options.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message
      throw new CliError(
        `cannot reach the admin API at ${options.baseUrl} (${cause}); is linkauth running?`,
        EXIT_REFUSED,
      )
    }
    const text = await response.text()
    const parsed = text ? safeJson(text) : undefined
    if (response.status === 401) {
      throw new CliError('the admin API refused the admin token (401): check ADMIN_TOKEN', EXIT_REFUSED)
    }
    if (!response.ok) {
      const detail = (parsed as { detail?: string } | undefined)?.detail ?? text.slice(0, 200)
      throw new CliError(`the server refused (${response.status}): ${detail}`, EXIT_REFUSED)
    }
    return parsed as T
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
