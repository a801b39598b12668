import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FAVICON } from '../../src/web/favicon.js'

/** Logo files for the brand tests, in a directory of their own. */
export function writeLogos() {
  const dir = mkdtempSync(join(tmpdir(), 'linkauth-brand-'))
  const file = (name: string, body: string | Buffer) => {
    const path = join(dir, name)
    writeFileSync(path, body)
    return path
  }
  return {
    // Our favicon is one 32 × 32 PNG after the ICO header (6 bytes) and its directory entry (16).
    png: file('logo.png', FAVICON.subarray(22)),
    // A 1 × 1 lossless WebP.
    webp: file('logo.webp', Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64')),
    svg: file('logo.svg', ACME_SVG),
    text: file('logo.txt', 'not an image'),
    big: file('big.svg', `<svg xmlns="http://www.w3.org/2000/svg">${'<!-- padding -->'.repeat(9000)}</svg>`),
    missing: join(dir, 'nowhere.png'),
    dir,
  }
}

/** A wordmark-free logo: a rounded square in the brand's colour with a white "A". */
export const ACME_SVG = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
  <rect width="64" height="64" rx="14" fill="#8a1c4a"/>
  <path d="M32 12 50 52h-9l-3.6-8.5H26.6L23 52h-9zm0 13-3.7 11h7.4z" fill="#fff"/>
</svg>
`
