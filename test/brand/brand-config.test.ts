import { afterAll, describe, expect, it } from 'vitest'
import { rmSync } from 'node:fs'
import { ConfigError, loadConfig } from '../../src/config.js'
import { DEFAULT_BRAND } from '../../src/web/brand.js'
import { writeLogos } from '../helpers/brand-logos.js'

const logos = writeLogos()
afterAll(() => rmSync(logos.dir, { recursive: true, force: true }))

const brandOf = (env: Record<string, string>) => loadConfig(env).brand
const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('loadConfig accepted it')
}

describe('BRAND_* settings', () => {
  it('default to our own name and look: no logo, no colours, no links', () => {
    expect(brandOf({})).toEqual({ ...DEFAULT_BRAND, logo: undefined, palette: {}, links: {} })
    expect(brandOf({ BRAND_NAME: '', BRAND_ACCENT: '', BRAND_LOGO: '' }).name).toBe('linkauth')
  })

  it('read the name, links and both accents', () => {
    const brand = brandOf({
      BRAND_NAME: '  Acme Accounts ',
      BRAND_ACCENT: '#8A1C4A',
      BRAND_ACCENT_DARK: '#f59ac0',
      BRAND_SUPPORT_URL: 'mailto:help@acme.example',
      BRAND_TERMS_URL: 'https://acme.example/terms',
      BRAND_PRIVACY_URL: 'https://acme.example/privacy',
    })
    expect(brand.name).toBe('Acme Accounts')
    expect(brand.palette.light?.primary).toBe('#8a1c4a')
    expect(brand.palette.dark?.primary).toBe('#f59ac0')
    expect(brand.links).toEqual({
      support: 'mailto:help@acme.example',
      terms: 'https://acme.example/terms',
      privacy: 'https://acme.example/privacy',
    })
  })

  it('derive a dark accent that passes on the dark card when only BRAND_ACCENT is given', () => {
    const dark = brandOf({ BRAND_ACCENT: '#8a1c4a' }).palette.dark!
    expect(dark.primary).not.toBe('#8a1c4a')
    expect(dark.primary).toMatch(/^#[0-9a-f]{6}$/)
  })

  it.each([
    [{ BRAND_ACCENT: 'red' }, 'BRAND_ACCENT: expected a hex colour such as #0b5cd5, got "red"'],
    [
      { BRAND_ACCENT_DARK: '#12345' },
      'BRAND_ACCENT_DARK: expected a hex colour such as #0b5cd5, got "#12345"',
    ],
    [{ BRAND_ACCENT: '#ffd700' }, 'BRAND_ACCENT=#ffd700 has contrast 1.4:1 on #ffffff; WCAG AA needs 4.5:1'],
    [{ BRAND_ACCENT: '#777' }, 'BRAND_ACCENT=#777 has contrast 4.47:1 on #ffffff; WCAG AA needs 4.5:1'],
    [
      { BRAND_ACCENT: '#8a1c4a', BRAND_ACCENT_DARK: '#8a1c4a' },
      'BRAND_ACCENT_DARK=#8a1c4a has contrast 1.93:1 on #161b22; WCAG AA needs 4.5:1',
    ],
    [
      { BRAND_SUPPORT_URL: 'http://acme.example/help' },
      'BRAND_SUPPORT_URL: expected an https: or mailto: URL',
    ],
    [{ BRAND_SUPPORT_URL: 'javascript:alert(1)' }, 'BRAND_SUPPORT_URL: expected an https: or mailto: URL'],
    [{ BRAND_TERMS_URL: 'acme.example/terms' }, 'BRAND_TERMS_URL: expected an https URL'],
    [{ BRAND_PRIVACY_URL: 'mailto:privacy@acme.example' }, 'BRAND_PRIVACY_URL: expected an https URL'],
    [{ BRAND_NAME: 'Acme\u0007' }, 'BRAND_NAME: expected a name without control characters'],
    [{ BRAND_NAME: 'A'.repeat(61) }, 'BRAND_NAME: expected at most 60 characters'],
  ])('refuse %j with one clear line', (env, message) => {
    expect(refusal(env)).toContain(message)
  })

  it('read a PNG, WebP or SVG logo once, with its type, size and a path holding its hash', () => {
    const png = brandOf({ BRAND_LOGO: logos.png }).logo!
    expect(png).toMatchObject({ type: 'image/png', width: 32, height: 32 })
    expect(png.path).toMatch(/^\/static\/brand-logo-[A-Za-z0-9_-]{16}\.png$/)
    expect(png.body.subarray(1, 4).toString()).toBe('PNG')
    expect(brandOf({ BRAND_LOGO: logos.webp }).logo).toMatchObject({
      type: 'image/webp',
      width: 1,
      height: 1,
    })
    const svg = brandOf({ BRAND_LOGO: logos.svg }).logo!
    expect(svg).toMatchObject({ type: 'image/svg+xml', width: 64, height: 64 })
    expect(svg.path).toMatch(/\.svg$/)
    expect(brandOf({ BRAND_LOGO: logos.svg }).logo!.path).toBe(svg.path)
  })

  it('refuse a missing, oversized or non-image logo, and a URL, naming the file', () => {
    expect(refusal({ BRAND_LOGO: logos.missing })).toBe(
      `BRAND_LOGO: expected a readable file, got ${JSON.stringify(logos.missing)} (no such file)`,
    )
    expect(refusal({ BRAND_LOGO: logos.dir })).toMatch(/^BRAND_LOGO: expected a readable file/)
    expect(refusal({ BRAND_LOGO: logos.big })).toBe(
      `BRAND_LOGO: expected a file of at most 128 KiB, got ${JSON.stringify(logos.big)} of 141 KiB`,
    )
    expect(refusal({ BRAND_LOGO: logos.text })).toBe(
      `BRAND_LOGO: expected a PNG, SVG or WebP image, got ${JSON.stringify(logos.text)} (another kind of file)`,
    )
    expect(refusal({ BRAND_LOGO: 'https://cdn.acme.example/logo.svg' })).toMatch(
      /^BRAND_LOGO: expected the path of a PNG, SVG or WebP file \(a logo at a URL: save it next to the server\)/,
    )
  })
})
