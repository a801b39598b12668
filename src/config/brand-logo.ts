import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import type { BrandLogo } from '../web/brand.js'
import { ConfigError } from './fields.js'

/** The largest logo accepted, bytes: a header logo is a few kilobytes; this is every page's weight. */
export const MAX_LOGO_BYTES = 128 * 1024

const EXTENSIONS = { 'image/png': 'png', 'image/svg+xml': 'svg', 'image/webp': 'webp' } as const

/** PNG, WebP or SVG by its first bytes (never by its name); undefined for anything else. */
function typeOf(body: Buffer): BrandLogo['type'] | undefined {
  if (body.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png'
  if (body.toString('latin1', 0, 4) === 'RIFF' && body.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp'
  const text = body.toString('utf8', 0, Math.min(body.length, 4096)).replace(/^\uFEFF/, '')
  if (/^\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text))
    return 'image/svg+xml'
  return undefined
}

/** The width and height the file declares (PNG IHDR, WebP VP8/VP8L/VP8X, SVG attributes or viewBox). */
function sizeOf(body: Buffer, type: BrandLogo['type']): { width?: number; height?: number } {
  if (type === 'image/png' && body.length >= 24)
    return { width: body.readUInt32BE(16), height: body.readUInt32BE(20) }
  if (type === 'image/webp' && body.length >= 30) {
    const chunk = body.toString('latin1', 12, 16)
    if (chunk === 'VP8X') return { width: body.readUIntLE(24, 3) + 1, height: body.readUIntLE(27, 3) + 1 }
    if (chunk === 'VP8 ')
      return { width: body.readUInt16LE(26) & 0x3fff, height: body.readUInt16LE(28) & 0x3fff }
    if (chunk === 'VP8L') {
      const bits = body.readUInt32LE(21)
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 }
    }
  }
  if (type === 'image/svg+xml') {
    const root = /<svg[^>]*>/i.exec(body.toString('utf8'))?.[0] ?? ''
    const attribute = (name: string) => new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(root)?.[1]
    const number = (value: string | undefined) =>
      value && /^\s*[\d.]+\s*(px)?\s*$/.test(value) ? parseFloat(value) : NaN
    const [width, height] = [number(attribute('width')), number(attribute('height'))]
    if (width > 0 && height > 0) return { width: Math.round(width), height: Math.round(height) }
    const box = (attribute('viewBox') ?? '')
      .trim()
      .split(/[\s,]+/)
      .map(Number)
    if (box.length === 4 && box[2]! > 0 && box[3]! > 0)
      return { width: Math.round(box[2]!), height: Math.round(box[3]!) }
  }
  return {}
}

/**
 * BRAND_LOGO: a PNG, SVG or WebP file read once at start, at most MAX_LOGO_BYTES, served at
 * /static/brand-logo-<hash>.<ext>. A URL is refused: the pages load nothing from another origin
 * (their CSP stays img-src 'self', and no third party learns who signs in).
 */
export function readBrandLogo(file: string): BrandLogo {
  if (/^[a-z][a-z0-9+.-]*:/i.test(file) && !/^[a-z]:[\\/]/i.test(file))
    throw new ConfigError(
      `BRAND_LOGO: expected the path of a PNG, SVG or WebP file (a logo at a URL: save it next to the server), got ${JSON.stringify(file)}`,
    )
  let size: number
  try {
    const stat = statSync(file)
    if (!stat.isFile()) throw new Error('not a file')
    size = stat.size
  } catch {
    throw new ConfigError(`BRAND_LOGO: expected a readable file, got ${JSON.stringify(file)} (no such file)`)
  }
  if (size > MAX_LOGO_BYTES)
    throw new ConfigError(
      `BRAND_LOGO: expected a file of at most ${MAX_LOGO_BYTES / 1024} KiB, got ${JSON.stringify(file)} of ${Math.ceil(size / 1024)} KiB`,
    )
  const body = readFileSync(file)
  const type = typeOf(body)
  if (!type)
    throw new ConfigError(
      `BRAND_LOGO: expected a PNG, SVG or WebP image, got ${JSON.stringify(file)} (another kind of file)`,
    )
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16)
  return { body, type, path: `/static/brand-logo-${hash}.${EXTENSIONS[type]}`, ...sizeOf(body, type) }
}
