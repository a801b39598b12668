import { z } from 'zod'
import { accentProblem, darkColours, derivedDarkAccent, lightColours } from '../web/brand-colours.js'
import { parseHex, toHex } from '../web/contrast.js'
import type { Brand } from '../web/brand.js'
import { readBrandLogo } from './brand-logo.js'
import { ConfigError, optionalString } from './fields.js'

const colour = optionalString.pipe(
  z
    .string()
    .regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'a hex colour such as #0b5cd5')
    .optional(),
)

const link = (protocols: RegExp, error: string) =>
  optionalString.pipe(z.url({ protocol: protocols, error }).optional())

/** The operator's brand on every page (docs/operating.md "Branding"). All optional: unset is our own look. */
export const brandSchema = z.object({
  BRAND_NAME: optionalString.pipe(
    z
      .string()
      .trim()
      .min(1)
      .max(60)
      .regex(/^[^\p{Cc}]+$/u, 'a name without control characters')
      .default('linkauth'),
  ),
  /** A PNG, SVG or WebP file, read once at start and served by us (brand-logo.ts). */
  BRAND_LOGO: optionalString,
  BRAND_ACCENT: colour,
  /** The accent in the dark colour scheme; unset → BRAND_ACCENT lightened until it passes there. */
  BRAND_ACCENT_DARK: colour,
  BRAND_SUPPORT_URL: link(/^(https|mailto)$/, 'an https: or mailto: URL'),
  BRAND_TERMS_URL: link(/^https$/, 'an https URL'),
  BRAND_PRIVACY_URL: link(/^https$/, 'an https URL'),
})

type BrandSettings = z.output<typeof brandSchema>

/** An accent in #rrggbb, refused with the ratio it reaches when it fails WCAG AA on its card or button. */
function checkedAccent(variable: string, value: string, scheme: 'light' | 'dark'): string {
  const accent = toHex(parseHex(value)!)
  const problem = accentProblem(variable, value, scheme)
  if (problem) throw new ConfigError(problem)
  return accent
}

/** The brand the settings describe: colours checked for contrast, the logo read and checked. */
export function brandSettings(e: BrandSettings): Brand {
  const light = e.BRAND_ACCENT && checkedAccent('BRAND_ACCENT', e.BRAND_ACCENT, 'light')
  const dark = e.BRAND_ACCENT_DARK
    ? checkedAccent('BRAND_ACCENT_DARK', e.BRAND_ACCENT_DARK, 'dark')
    : light && derivedDarkAccent(light)
  return {
    name: e.BRAND_NAME,
    logo: e.BRAND_LOGO ? readBrandLogo(e.BRAND_LOGO) : undefined,
    palette: { light: light ? lightColours(light) : undefined, dark: dark ? darkColours(dark) : undefined },
    links: { support: e.BRAND_SUPPORT_URL, terms: e.BRAND_TERMS_URL, privacy: e.BRAND_PRIVACY_URL },
  }
}
