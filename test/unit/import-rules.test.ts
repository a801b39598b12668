import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * DESIGN §2's import rules, checked on the sources rather than remembered: no import circles; a
 * domain imports another domain's service, never its repository; only the composition roots
 * import services.ts (a route names the services it uses); lib/ imports nothing of the server's; the published toolkit imports nothing outside its own package.
 */
const root = resolve(import.meta.dirname, '../..')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

const IMPORT = /^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm

/** Every relative import of each file, as repository-relative paths of .ts files. */
function importGraph(dirs: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of dirs.flatMap((d) => sourceFiles(join(root, d)))) {
    const targets: string[] = []
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!
      if (!specifier.startsWith('.')) continue
      targets.push(relative(root, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))))
    }
    graph.set(relative(root, file), targets)
  }
  return graph
}

const graph = importGraph(['src', 'packages/resource/src'])
const domainOf = (path: string) => /^src\/([^/]+)\//.exec(path)?.[1]

describe('import rules', () => {
  it('finds the sources', () => {
    expect(graph.size).toBeGreaterThan(100)
  })

  it('has no import circle', () => {
    const circles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' → '))
        return
      }
      state.set(file, 'open')
      for (const next of graph.get(file) ?? []) visit(next, [...path, file])
      state.set(file, 'done')
    }
    for (const file of graph.keys()) visit(file, [])
    expect(circles).toEqual([])
  })

  it('lets no domain import another domain’s repository', () => {
    const crossings = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((t) => t.endsWith('.repository.ts') && domainOf(t) !== domainOf(file))
        .map((t) => `${file} → ${t}`),
    )
    expect(crossings).toEqual([])
  })

  it('lets only the composition roots import services.ts', () => {
    const roots = new Set(['src/app.ts', 'src/admin-app.ts', 'src/serve.ts'])
    const reaching = [...graph].flatMap(([file, targets]) =>
      targets.includes('src/services.ts') && !roots.has(file) ? [`${file} → src/services.ts`] : [],
    )
    expect(reaching).toEqual([])
  })

  it('keeps lib/ free of the server’s modules', () => {
    const crossings = [...graph].flatMap(([file, targets]) =>
      file.startsWith('src/lib/')
        ? targets.filter((t) => !t.startsWith('src/lib/')).map((t) => `${file} → ${t}`)
        : [],
    )
    expect(crossings).toEqual([])
  })

  it('lets the toolkit import only Node and its own declared dependencies', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'packages/resource/package.json'), 'utf8')) as {
      dependencies: Record<string, string>
      peerDependencies: Record<string, string>
    }
    const declared = new Set([
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.peerDependencies),
    ])
    const undeclared = sourceFiles(join(root, 'packages/resource/src')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(IMPORT)]
        .map((m) => m[1] ?? m[2]!)
        .filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:') && !declared.has(spec))
        .map((spec) => `${relative(root, file)} → ${spec}`),
    )
    expect(undeclared).toEqual([])
  })

  it('keeps the toolkit inside its package', () => {
    const crossings = [...graph].flatMap(([file, targets]) =>
      file.startsWith('packages/resource/')
        ? targets.filter((t) => !t.startsWith('packages/resource/src/')).map((t) => `${file} → ${t}`)
        : [],
    )
    expect(crossings).toEqual([])
  })
})
