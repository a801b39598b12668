import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, expect, type TestContext } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import {
  checkResponse,
  createValidator,
  documentedOperations,
  type OpenApiDocument,
} from '../helpers/openapi.js'

/**
 * The shared set-up of the OpenAPI tests (openapi-*.test.ts): the documents against real answers.
 * Every JSON answer is validated with a JSON Schema 2020-12 validator against the schema of its
 * documented status and media type (`check`), and each answer file ends by asserting that it
 * checked every documented operation of its area (`uncheckedIn`).
 *
 * One app per test file: `useOpenApiApp()` builds it before the file's tests, and `t`, `publicDoc`
 * and `adminDoc` are live bindings that hold it from then on (each test file has its own copy of
 * this module, as of every module).
 */
export let t: TestApp
export let publicDoc: OpenApiDocument
export let adminDoc: OpenApiDocument
export const ajv = createValidator()
/** `listener operation` of every answer `check` validated in this file. */
export const exercised = new Set<string>()

export function useOpenApiApp(): void {
  beforeAll(async () => {
    // Every operation's 401 is checked against a real answer: more wrong admin tokens than the
    // per-address failure limit allows in a minute (that limit has its own test in test/admin).
    t = await buildTestApp({ env: { ADMIN_AUTH_FAILURE_LIMIT: '1000' } })
    publicDoc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    adminDoc = (await t.admin.inject({ method: 'GET', url: '/openapi.json', headers: adminHeaders })).json()
  })
  afterAll(async () => t.close())
}

export function has(app: FastifyInstance, operation: string): boolean {
  const [method, path] = operation.split(' ') as [string, string]
  return app.hasRoute({ method: method as 'GET', url: path.replace(/\{(\w+)\}/g, ':$1') })
}

export function skipUnlessBuilt(ctx: TestContext, operation: string) {
  if (!has(t.app, operation)) ctx.skip()
}

/** Sends a request and checks the answer against the document of the listener it went to. */
export async function check(
  listener: 'public' | 'admin',
  operation: string,
  request: InjectOptions,
  expectedStatus: number,
): Promise<LightMyRequestResponse> {
  const app = listener === 'public' ? t.app : t.admin
  const doc = listener === 'public' ? publicDoc : adminDoc
  const [method] = operation.split(' ') as [InjectOptions['method']]
  const res = await app.inject({ method, ...request })
  expect(res.statusCode, `${operation}: ${res.body}`).toBe(expectedStatus)
  expect(checkResponse(doc, ajv, operation, res)).toEqual([])
  exercised.add(`${listener} ${operation}`)
  return res
}

/**
 * Which answer file checks a documented operation against a real answer: the passkey operations of
 * both listeners in openapi-passkeys.test.ts, the others in the file of their listener.
 */
export type AnswerArea = 'public' | 'admin' | 'passkeys'
export function areaOf(operation: string): AnswerArea {
  if (/passkey/.test(operation)) return 'passkeys'
  return operation.startsWith('admin ') ? 'admin' : 'public'
}

/** The documented operations of `area` that exist and that no `check` of this file validated. */
export function uncheckedIn(area: AnswerArea): string[] {
  return [
    ...documentedOperations(publicDoc)
      .filter((op) => has(t.app, op))
      .map((op) => `public ${op}`),
    ...documentedOperations(adminDoc).map((op) => `admin ${op}`),
  ].filter((op) => areaOf(op) === area && !exercised.has(op))
}

export const TOKEN = '/api/oauth/token'
export const REVOKE = '/api/oauth/revoke'
export const INTROSPECT = '/api/oauth/introspect'
export const form = (url: string, params: Record<string, string>) => ({
  url,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(params).toString(),
})
export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
