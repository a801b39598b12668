import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { adminOpenApiDocument, publicOpenApiDocument } from '../../src/openapi/document.js'

/**
 * The OpenAPI lint gate (scripts/lint-openapi.ts, `npm run lint:openapi`): Redocly CLI's recommended
 * rules over both served documents. Part of `npm test`, so CI runs it; shown to fail on a broken one.
 */
const dir = mkdtempSync(join(tmpdir(), 'linkauth-openapi-test-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function lint(...files: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/lint-openapi.ts', ...files], {
    encoding: 'utf8',
  })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

describe('the OpenAPI lint gate', () => {
  it('passes both documents the listeners serve', () => {
    const run = lint()
    expect(run.output).toContain('public.openapi.json')
    expect(run.output).toContain('admin.openapi.json')
    expect(run.status, run.output).toBe(0)
  })

  it('fails a document that breaks a recommended rule', () => {
    const broken = publicOpenApiDocument(loadConfig({})) as { paths: Record<string, Record<string, object>> }
    const { security: _open, ...token } = broken.paths['/api/oauth/token']!.post as { security: unknown }
    broken.paths['/api/oauth/token']!.post = token
    const admin = adminOpenApiDocument() as { paths: Record<string, Record<string, object>> }
    const { summary: _summary, ...listClients } = admin.paths['/admin/clients']!.get as { summary: string }
    admin.paths['/admin/clients']!.get = listClients
    const files = [join(dir, 'public.json'), join(dir, 'admin.json')]
    writeFileSync(files[0]!, JSON.stringify(broken))
    writeFileSync(files[1]!, JSON.stringify(admin))
    const run = lint(...files)
    expect(run.status).not.toBe(0)
    expect(run.output).toContain('security-defined')
    expect(run.output).toContain('operation-summary')
    // The edits stayed in the copies: the next app's documents are whole (a shared worker once
    // served a token operation without `security` to every later file).
    const next = publicOpenApiDocument(loadConfig({})) as { paths: Record<string, Record<string, object>> }
    expect(next.paths['/api/oauth/token']!.post).toHaveProperty('security', [])
    const nextAdmin = adminOpenApiDocument() as { paths: Record<string, Record<string, object>> }
    expect(nextAdmin.paths['/admin/clients']!.get).toHaveProperty('summary')
  })
})
