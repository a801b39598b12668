import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

function headings(markdown: string): Set<string> {
  const inCode = /```[\s\S]*?```/g
  return new Set([...markdown.replace(inCode, '').matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)))
}

/** A clone holds only the repository: every page a reader is sent to must be inside it. */
const pages = [
  'README.md',
  'SECURITY.md',
  'bench/README.md',
  'examples/links-api/README.md',
  'examples/commerce-api/README.md',
  'examples/links-cli/README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

describe.each(pages)('%s', (file) => {
  const markdown = readFileSync(file, 'utf8')
  const links = [...markdown.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)

  it('every relative link resolves to a heading or a file inside the repository', () => {
    const broken = links
      .filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l))
      .filter((l) => {
        const [path, anchor] = l.split('#') as [string, string | undefined]
        const target = path === '' ? file : join(dirname(file), path)
        if (relative('.', target).startsWith('..')) return true // a clone has nothing there
        if (!existsSync(target)) return true
        return anchor !== undefined && !headings(readFileSync(target, 'utf8')).has(anchor)
      })
    expect(broken).toEqual([])
  })
})
