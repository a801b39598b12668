import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
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

describe.each(['docs/integrating.md', 'docs/operating.md', 'README.md', 'examples/links-api/README.md'])(
  '%s',
  (file) => {
    const markdown = readFileSync(file, 'utf8')
    const links = [...markdown.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)

    it('every link to a heading or a file of the repository resolves', () => {
      const broken = links
        .filter((l) => !/^https?:/.test(l))
        .filter((l) => {
          const [path, anchor] = l.split('#') as [string, string | undefined]
          const target = path === '' ? file : join(dirname(file), path)
          if (target.startsWith('..')) return false // outside the repository (the shared spec)
          if (!existsSync(target)) return true
          return anchor !== undefined && !headings(readFileSync(target, 'utf8')).has(anchor)
        })
      expect(broken).toEqual([])
    })
  },
)
