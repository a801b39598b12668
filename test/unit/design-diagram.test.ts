import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * docs/design.md's Mermaid pictures kept true to the tree: the layer diagram (the ```mermaid block
 * marked `%% layers`) names only paths that exist and names every folder of src/; the request
 * diagrams' participants are modules that exist. A folder moved, renamed or added fails here until
 * the picture says so too.
 */
const root = resolve(import.meta.dirname, '../..')
const design = readFileSync(join(root, 'docs/design.md'), 'utf8')

/** The bodies of the ```mermaid blocks of a Markdown text. */
function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

/** Repository paths the diagram names: under src/, packages/, examples/ or migrations/. */
function namedPaths(diagram: string): string[] {
  const paths = diagram.match(/(?<![\w./-])(?:src|packages|examples|migrations)\/[\w./-]*/g) ?? []
  return [...new Set(paths)]
}

/** What is wrong with a layer diagram against the tree at `base`; empty when it is true. */
function layerProblems(diagram: string, base: string): string[] {
  const named = namedPaths(diagram)
  const gone = named.filter((path) => !existsSync(join(base, path))).map((path) => `${path} does not exist`)
  const srcFolders = readdirSync(join(base, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `src/${entry.name}/`)
  const missing = srcFolders.filter((folder) => !named.includes(folder)).map((f) => `${f} is not in it`)
  return [...gone, ...missing]
}

const layers = mermaidBlocks(design).filter((block) => /^\s*%% layers$/m.test(block))

describe('the layer diagram in docs/design.md', () => {
  it('is there, once, as a flowchart', () => {
    expect(layers).toHaveLength(1)
    expect(layers[0]).toMatch(/^flowchart /)
  })

  it('names only paths that exist, and every folder of src/', () => {
    expect(namedPaths(layers[0]!).length).toBeGreaterThan(10)
    expect(layerProblems(layers[0]!, root)).toEqual([])
  })

  it('a folder gone or one not drawn is found (the check itself)', () => {
    const diagram = layers[0]!
    const folder = namedPaths(diagram).find((path) => /^src\/[\w-]+\/$/.test(path))!
    expect(layerProblems(diagram.replaceAll(folder, ''), root)).toEqual([`${folder} is not in it`])
    const withGhost = `${diagram}\n  ghost["src/no-such-folder/"]`
    expect(layerProblems(withGhost, root)).toEqual(['src/no-such-folder/ does not exist'])
  })
})

describe('the request diagrams in docs/design.md', () => {
  it('name modules of src/ that exist', () => {
    const participants = mermaidBlocks(design)
      .filter((block) => block.startsWith('sequenceDiagram'))
      .flatMap((block) => [...block.matchAll(/^\s*participant \w+ as ([\w./-]+\/[\w./-]*)$/gm)])
      .map((m) => `src/${m[1]}`)
    expect(participants.length).toBeGreaterThan(5)
    expect(participants.filter((path) => !existsSync(join(root, path)))).toEqual([])
  })
})
