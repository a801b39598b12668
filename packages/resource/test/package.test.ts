import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installPackedResource } from '../../../test/helpers/offline-project.js'

/**
 * What a resource API gets from `npm install @linkauth/resource`: the packed tarball, installed in a
 * project outside the repository (from the npm cache where it can), imported by plain Node and type
 * checked by TypeScript, with nothing of the server's dependencies.
 */
const run = promisify(execFile)
const packageDir = resolve(import.meta.dirname, '..')
const repoRoot = resolve(packageDir, '../..')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

let project: string
let packedFiles: string[]

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'linkauth-resource-'))
  // prepack builds dist/ from the sources, so the tarball is what `npm publish` would send.
  const packed = await installPackedResource(project, 'a-resource-api', ['jose', 'fastify-plugin'])
  packedFiles = packed.files.map((f) => f.path)
}, 180_000)

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true })
})

describe('the @linkauth/resource package', () => {
  it('packs only its build, its README and its package.json', () => {
    expect(packedFiles).toContain('dist/index.js')
    expect(packedFiles).toContain('dist/index.d.ts')
    expect(packedFiles).toContain('dist/token-contract.js')
    expect(packedFiles).toContain('dist/dpop.js')
    expect(packedFiles).toContain('dist/dpop.d.ts')
    expect(packedFiles).toContain('README.md')
    const outside = packedFiles.filter((f) => !f.startsWith('dist/'))
    expect(outside.sort()).toEqual(['README.md', 'package.json'])
  })

  it('installs without the server’s dependencies', async () => {
    const { stdout } = await run(npm, ['ls', '--all', '--parseable'], { cwd: project })
    for (const serverOnly of ['argon2', '@electric-sql/pglite', 'pg', 'ioredis', 'kysely'])
      expect(stdout).not.toMatch(new RegExp(`[/\\\\]node_modules[/\\\\]${serverOnly}$`, 'm'))
  })

  it('is imported by plain Node, with its public API and the token contract', async () => {
    const script = `
      const toolkit = await import('@linkauth/resource')
      const contract = await import('@linkauth/resource/token-contract')
      const dpop = await import('@linkauth/resource/dpop')
      console.log(JSON.stringify({
        createResourceVerifier: typeof toolkit.createResourceVerifier,
        linkauthResource: typeof toolkit.linkauthResource,
        InvalidTokenError: typeof toolkit.InvalidTokenError,
        readAccessTokenClaims: typeof contract.readAccessTokenClaims,
        verifyDpopProof: typeof dpop.verifyDpopProof,
      }))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project })
    expect(JSON.parse(stdout)).toEqual({
      createResourceVerifier: 'function',
      linkauthResource: 'function',
      InvalidTokenError: 'function',
      readAccessTokenClaims: 'function',
      verifyDpopProof: 'function',
    })
  })

  it('brings its types', async () => {
    await writeFile(
      join(project, 'api.ts'),
      `import { createResourceVerifier, type AccessTokenClaims, type ResourceVerifierOptions } from '@linkauth/resource'
export const verifierFor = (options: ResourceVerifierOptions) => createResourceVerifier(options)
export const scopesOf = (claims: AccessTokenClaims): string[] => claims.scopes
`,
    )
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2023',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['api.ts'],
      }),
    )
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
    await expect(run(process.execPath, [tsc, '-p', project], { cwd: project })).resolves.toBeDefined()
  })
})
