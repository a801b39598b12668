import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'

/**
 * A project of its own outside the repository that installs the packed @linkauth/resource and some of
 * the repository's own dependencies, with `npm ci --offline`: its package-lock.json is cut from the
 * repository's (the same versions and integrity hashes), so every tarball comes from the npm cache that
 * the repository's `npm ci` filled, and nothing is asked of the registry. (`npm install` of named
 * versions needs each package's registry document, which `npm ci` never caches: on a machine without
 * the network, the bare machine of CI's newcomer run, it hung until the hook's time ran out.)
 */
const run = promisify(execFile)
const repoRoot = resolve(import.meta.dirname, '../..')
export const resourcePackageDir = join(repoRoot, 'packages/resource')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

interface LockEntry {
  version?: string
  integrity?: string
  resolved?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
  [key: string]: unknown
}

/**
 * The lock entries that `names` need at their locked versions: each name resolved from where it is
 * required as Node resolves it (the nearest node_modules up the path), with its dependencies and its
 * non-optional peers, transitively. Paths stay as in the repository's lockfile.
 */
export function lockClosure(
  packages: Record<string, LockEntry>,
  names: readonly string[],
): Record<string, LockEntry> {
  const taken: Record<string, LockEntry> = {}
  const find = (from: string, name: string): string | undefined => {
    for (let dir = from; ;) {
      const path = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`
      if (packages[path]) return path
      if (dir === '') return undefined
      const parent = dir.lastIndexOf('/node_modules/')
      dir = parent === -1 ? '' : dir.slice(0, parent)
    }
  }
  const visit = (from: string, name: string, optional: boolean) => {
    const path = find(from, name)
    if (!path) {
      if (optional) return
      throw new Error(`${name} (needed by ${from || 'the project'}) is not in the repository's lockfile`)
    }
    if (taken[path]) return
    const entry = packages[path]!
    taken[path] = entry
    for (const dep of Object.keys(entry.dependencies ?? {})) visit(path, dep, false)
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(path, dep, true)
    for (const dep of Object.keys(entry.peerDependencies ?? {}))
      visit(path, dep, entry.peerDependenciesMeta?.[dep]?.optional === true)
  }
  for (const name of names) visit('', name, false)
  return taken
}

/**
 * Packs packages/resource into `project` (its prepack builds dist/) and installs it there with
 * `dependencies` (names from the repository's lockfile) by `npm ci --offline`. Returns what npm pack
 * reported of the tarball.
 */
export async function installPackedResource(
  project: string,
  name: string,
  dependencies: readonly string[],
): Promise<{ filename: string; files: { path: string }[] }> {
  const { stdout } = await run(npm, ['pack', '--json', '--pack-destination', project], {
    cwd: resourcePackageDir,
  })
  const [packed] = JSON.parse(stdout) as {
    filename: string
    integrity: string
    version: string
    files: { path: string }[]
  }[]
  const own = JSON.parse(await readFile(join(resourcePackageDir, 'package.json'), 'utf8')) as {
    name: string
    dependencies: Record<string, string>
  }
  const lock = JSON.parse(await readFile(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>
  }
  const closure = lockClosure(lock.packages, [
    ...new Set([...dependencies, ...Object.keys(own.dependencies)]),
  ])
  const direct = Object.fromEntries(dependencies.map((n) => [n, closure[`node_modules/${n}`]!.version!]))
  const tarball = `file:${packed!.filename}`
  const rootDependencies = { ...direct, [own.name]: tarball }
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module', dependencies: rootDependencies }, null, 2),
  )
  await writeFile(
    join(project, 'package-lock.json'),
    JSON.stringify(
      {
        name,
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name, dependencies: rootDependencies },
          ...closure,
          [`node_modules/${own.name}`]: {
            version: packed!.version,
            resolved: tarball,
            integrity: packed!.integrity,
            dependencies: own.dependencies,
          },
        },
      },
      null,
      2,
    ),
  )
  await run(npm, ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project })
  return packed!
}
