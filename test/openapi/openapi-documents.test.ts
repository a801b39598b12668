import type { LightMyRequestResponse } from 'fastify'
import { describe, expect, it } from 'vitest'
import { authorizationServerMetadata } from '../../src/oauth/metadata.routes.js'
import {
  checkResponse,
  documentedOperations,
  type OpenApiDocument,
  registeredRoutes,
} from '../helpers/openapi.js'
import { t, publicDoc, adminDoc, ajv, has, check, useOpenApiApp } from './openapi-answers.js'

/**
 * The OpenAPI documents themselves: OpenAPI 3.1, schemas that compile, summaries and access stated;
 * every route either app registers is documented (or is a page for people), every documented
 * operation exists; and the checker the answer files use finds what does not match.
 */
useOpenApiApp()

/** Pages and forms for a browser: not JSON, so not in the OpenAPI documents. */
const HTML_ROUTES = new Set([
  'GET /static/style.css',
  'GET /favicon.ico',
  'GET /login',
  'POST /login',
  'POST /logout',
  'GET /oauth/authorize/continue',
  'POST /oauth/authorize',
  'GET /account/apps',
  'POST /account/apps/{client_id}/revoke',
  'GET /account/password',
  'POST /account/password',
  'GET /account/reset-password',
  'POST /account/reset-password',
  'GET /metrics',
  // Passkeys (issue 30): the script, the sign-in form's passkey POST, the account area's pages.
  'GET /static/passkeys.js',
  'POST /login/passkey',
  'GET /account/activity',
  'POST /account/password/sign-in',
  'GET /account/passkeys',
  'POST /account/passkeys',
  'POST /account/passkeys/confirm',
  'POST /account/passkeys/confirm-passkey',
  'POST /account/passkeys/{id}/rename',
  'POST /account/passkeys/{id}/remove',
  // The device grant's pages (RFC 8628 §3.3): the user code, then the device consent.
  'GET /device',
  'POST /device',
  'GET /device/confirm',
  'POST /device/confirm',
  // The language menu (issue 40): sets the language cookie and goes back to the page.
  'GET /language',
])

/** Documented, built on other branches; their checks run once they are merged. */
const COMING = new Set([
  'POST /api/oauth/revoke',
  'POST /api/oauth/introspect',
  'GET /api/account/apps',
  'DELETE /api/account/apps/{client_id}',
])

describe('the documents', () => {
  it('are OpenAPI 3.1 with an operationId on every operation', () => {
    for (const doc of [publicDoc, adminDoc] as unknown as Record<string, unknown>[]) {
      expect(doc.openapi).toBe('3.1.0')
      const paths = doc.paths as Record<string, Record<string, { operationId?: string }>>
      const ids = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.operationId))
      expect(ids.every((id) => typeof id === 'string')).toBe(true)
      expect(new Set(ids).size).toBe(ids.length)
    }
  })

  it('every schema in them compiles as JSON Schema 2020-12', () => {
    for (const doc of [publicDoc, adminDoc]) {
      for (const item of Object.values(doc.paths)) {
        for (const op of Object.values(item) as {
          responses: Record<string, { content?: Record<string, { schema?: object }> }>
          requestBody?: { content: Record<string, { schema: object }> }
        }[]) {
          const media = [
            ...Object.values(op.responses).flatMap((r) => Object.values(r.content ?? {})),
            ...Object.values(op.requestBody?.content ?? {}),
          ]
          for (const m of media) if (m.schema) expect(() => ajv.compile(m.schema!)).not.toThrow()
        }
      }
    }
  })

  it('token and revocation bodies may leave client_id out (it can come as the HTTP Basic user-id)', () => {
    const body = (path: string) => {
      const op = publicDoc.paths[path]!.post as unknown as {
        requestBody: { content: Record<string, { schema: object }> }
      }
      return op.requestBody.content['application/x-www-form-urlencoded']!.schema
    }
    const valid = (path: string, request: object) => ajv.compile(body(path))(request)
    const code = { grant_type: 'authorization_code', code: 'c', code_verifier: 'v'.repeat(43) }
    expect(valid('/api/oauth/token', code)).toBe(true)
    expect(valid('/api/oauth/token', { grant_type: 'refresh_token', refresh_token: 'r' })).toBe(true)
    expect(valid('/api/oauth/revoke', { token: 't' })).toBe(true)
    expect(JSON.stringify(body('/api/oauth/revoke'))).toContain(
      'Required unless sent as the HTTP Basic user-id',
    )
  })

  it('every operation has a summary and states its access: `security: []` when open', () => {
    for (const doc of [publicDoc, adminDoc] as unknown as Record<string, unknown>[]) {
      const paths = doc.paths as Record<string, Record<string, { summary?: string; security?: unknown[] }>>
      for (const [path, item] of Object.entries(paths)) {
        for (const [method, op] of Object.entries(item)) {
          expect(op.summary, `${method} ${path}`).toMatch(/\S/)
          expect(op.security ?? doc.security, `${method} ${path}`).toBeInstanceOf(Array)
        }
      }
    }
    const open = (doc: OpenApiDocument, path: string) =>
      (doc.paths[path]!.get as unknown as { security?: unknown[] }).security
    for (const path of ['/.well-known/jwks.json', '/healthz', '/openapi.json'])
      expect(open(publicDoc, path)).toEqual([])
    expect(open(adminDoc, '/healthz')).toEqual([])
    expect(open(adminDoc, '/metrics')).toBeUndefined() // the document's admin token
  })

  it('the admin document is behind the admin token', async () => {
    await check('admin', 'GET /openapi.json', { url: '/openapi.json' }, 401)
  })
})

describe('coverage', () => {
  it('every route that answers JSON is documented on its own listener', () => {
    for (const [app, doc] of [
      [t.app, publicDoc],
      [t.admin, adminDoc],
    ] as const) {
      const documented = new Set(documentedOperations(doc))
      const missing = registeredRoutes(app).filter((r) => !HTML_ROUTES.has(r) && !documented.has(r))
      expect(missing).toEqual([])
    }
  })

  it('every documented operation exists, or is one being built on another branch', () => {
    expect(documentedOperations(publicDoc).filter((op) => !has(t.app, op) && !COMING.has(op))).toEqual([])
    expect(documentedOperations(adminDoc).filter((op) => !has(t.admin, op))).toEqual([])
  })
})

describe('the checker itself', () => {
  it('reports a body that does not match, an undocumented status and an undocumented media type', () => {
    const fake = (statusCode: number, contentType: string, body: string) =>
      ({ statusCode, headers: { 'content-type': contentType }, body }) as unknown as LightMyRequestResponse
    const op = 'GET /.well-known/oauth-authorization-server'
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'application/json', '{"issuer":"x"}'))).toHaveLength(1)
    expect(checkResponse(publicDoc, ajv, op, fake(418, 'application/json', '{}'))).toHaveLength(1)
    const metadata = JSON.stringify(authorizationServerMetadata(t.config))
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'text/plain', metadata))).toHaveLength(1)
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'application/json', metadata))).toEqual([])
    const extra = JSON.stringify({ ...authorizationServerMetadata(t.config), undocumented: 1 })
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'application/json', extra))).toHaveLength(1)
  })
})
