/**
 * Lints the OpenAPI documents the two listeners serve, and the links API's (examples/links-api),
 * with Redocly CLI's recommended rules (redocly.yaml), offline and without telemetry.
 *
 *   tsx scripts/lint-openapi.ts            builds the documents as the services do and lints them
 *   tsx scripts/lint-openapi.ts FILE…      lints these files instead (test/openapi/lint.test.ts)
 *
 * Exit code: Redocly's (non-zero when a rule at error level fails).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.js'
import { adminOpenApiDocument, publicOpenApiDocument } from '../src/openapi/document.js'
import { linksOpenApiDocument } from '../examples/links-api/src/openapi.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const redocly = join(
  dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')),
  'bin/cli.js',
)

function lint(files: string[]): number {
  const result = spawnSync(
    process.execPath,
    [redocly, 'lint', '--config', join(root, 'redocly.yaml'), '--format', 'stylish', ...files],
    {
      stdio: 'inherit',
      // No usage data, no update check: the lint runs the same offline.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  )
  return result.status ?? 1
}

function lintServedDocuments(): number {
  const dir = mkdtempSync(join(tmpdir(), 'linkauth-openapi-'))
  try {
    const files = {
      'public.openapi.json': publicOpenApiDocument(loadConfig({})),
      'admin.openapi.json': adminOpenApiDocument(),
      'links-api.openapi.json': linksOpenApiDocument('http://localhost:3002', { mcp: true }),
    }
    for (const [name, document] of Object.entries(files))
      writeFileSync(join(dir, name), JSON.stringify(document, null, 2))
    return lint(Object.keys(files).map((name) => join(dir, name)))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const files = process.argv.slice(2)
process.exitCode = files.length > 0 ? lint(files) : lintServedDocuments()
