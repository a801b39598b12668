import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { s256Challenge } from '../../src/lib/pkce.js'
import type { Scope } from '../../src/lib/scopes.js'
import type { TestApp } from './app.js'

/** A tiny cookie jar for app.inject: remembers Set-Cookie, sends Cookie, forgets cleared cookies. */
export class CookieJar {
  readonly cookies = new Map<string, string>()

  store(res: LightMyRequestResponse): void {
    const header = res.headers['set-cookie']
    this.storeLines(header === undefined ? [] : Array.isArray(header) ? header : [header])
  }

  /** Takes Set-Cookie header lines (as from fetch's headers.getSetCookie()). */
  storeLines(lines: readonly string[]): void {
    for (const line of lines) {
      const [pair, ...attributes] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      const expired = attributes.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a))
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  header(): string {
    return [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ')
  }
}

/**
 * A browser-ish user agent over app.inject: keeps cookies, does not follow redirects. `address` is
 * the client address the server sees (app.inject's default is 127.0.0.1).
 */
export class Browser {
  readonly jar = new CookieJar()
  constructor(
    private readonly app: FastifyInstance,
    private readonly address?: string,
  ) {}

  async get(url: string): Promise<LightMyRequestResponse> {
    const res = await this.app.inject({
      method: 'GET',
      url,
      headers: { cookie: this.jar.header() },
      ...(this.address ? { remoteAddress: this.address } : {}),
    })
    this.jar.store(res)
    return res
  }

  async post(url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
    const res = await this.app.inject({
      method: 'POST',
      url,
      headers: { cookie: this.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
      ...(this.address ? { remoteAddress: this.address } : {}),
    })
    this.jar.store(res)
    return res
  }

  /** POSTs a JSON body with the X-CSRF-Token header, as a page's script does with fetch. */
  async postJson(url: string, csrfToken: string, body: object = {}): Promise<LightMyRequestResponse> {
    const res = await this.app.inject({
      method: 'POST',
      url,
      headers: { cookie: this.jar.header(), 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      payload: JSON.stringify(body),
      ...(this.address ? { remoteAddress: this.address } : {}),
    })
    this.jar.store(res)
    return res
  }

  /** Opens /login (for its CSRF cookie and field) and submits the credentials. */
  async signIn(email: string, password: string, requestId?: string): Promise<LightMyRequestResponse> {
    const page = await this.get(requestId ? `/login?request=${requestId}` : '/login')
    return this.post('/login', {
      email,
      password,
      csrf_token: hiddenField(page.body, 'csrf_token'),
      ...(requestId ? { request: requestId } : {}),
    })
  }
}

/** The value of a hidden input in a page (the first with that name). */
export function hiddenField(body: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(body)
  if (!match) throw new Error(`no hidden field ${name} in page`)
  return match[1]!
}

export const VERIFIER = 'test-verifier-0123456789-abcdefghijklmnopqrstuvwxyz'
export const CHALLENGE = s256Challenge(VERIFIER)
export const REDIRECT_URI = 'https://app.example/callback'
export const PASSWORD = 'correct horse battery staple'

export function authorizeUrl(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams(params).toString()}`
}

/** One registered client and one user, and the parameters of a valid request from that client. */
export async function seed(
  t: TestApp,
  options: { scopes?: Scope[]; redirectUris?: string[]; email?: string } = {},
) {
  const client = await t.services.clients.createClient({
    name: 'Link App',
    redirect_uris: options.redirectUris ?? [REDIRECT_URI, 'https://app.example/cb?mode=web'],
    scopes: options.scopes,
  })
  const email = options.email ?? `user-${Math.random().toString(36).slice(2)}@example.com`
  const user = await t.services.users.createUser({ email, password: PASSWORD })
  const params = {
    response_type: 'code',
    client_id: client.id,
    redirect_uri: REDIRECT_URI,
    scope: 'links:read links:write',
    state: 'xyz-state',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  }
  return { client, user, email, params }
}

export async function countRows(t: TestApp) {
  const grants = await t.database.db
    .selectFrom('grants')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  const codes = await t.database.db
    .selectFrom('authorization_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return { grants: Number(grants.n), codes: Number(codes.n) }
}

/** The query of a redirect's Location, as a plain object. */
export function locationParams(res: LightMyRequestResponse): Record<string, string> {
  const location = res.headers.location
  if (typeof location !== 'string') throw new Error(`no Location header (status ${res.statusCode})`)
  return Object.fromEntries(new URL(location, 'http://local').searchParams)
}
