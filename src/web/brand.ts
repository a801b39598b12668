import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance } from 'fastify'
import { type AccentColours, paletteRules } from './brand-colours.js'
import { html, type SafeHtml } from './html.js'
import type { Messages } from './i18n/en.js'

/** A logo read at start and served by us (static.routes.ts) at `path`, which holds its content hash. */
export interface BrandLogo {
  body: Buffer
  type: 'image/png' | 'image/svg+xml' | 'image/webp'
  path: string
  /** Its intrinsic size when the file says it: the page reserves the box before it loads. */
  width?: number | undefined
  height?: number | undefined
}

/** The operator's brand (BRAND_* settings, docs/operating.md "Branding"): on every page. */
export interface Brand {
  name: string
  logo?: BrandLogo | undefined
  palette: { light?: AccentColours | undefined; dark?: AccentColours | undefined }
  links: { support?: string | undefined; terms?: string | undefined; privacy?: string | undefined }
}

export const SERVICE_NAME = 'linkauth'

/** No BRAND_* setting: today's pages exactly. */
export const DEFAULT_BRAND: Brand = Object.freeze({ name: SERVICE_NAME, palette: {}, links: {} })

declare module 'fastify' {
  interface FastifyInstance {
    /** The brand this listener's pages show. */
    brand: Brand
  }
}

/**
 * The brand of the request being answered. Pages render without the request in hand, so the brand
 * travels with the request's asynchronous context: set before each handler (useBrand) and around
 * the error pages (withBrand).
 */
const current = new AsyncLocalStorage<Brand>()

export function currentBrand(): Brand {
  return current.getStore() ?? DEFAULT_BRAND
}

export function withBrand<T>(brand: Brand, render: () => T): T {
  return current.run(brand, render)
}

/**
 * Every handler of `app` renders in `brand`. preHandler is the last step before the handler, after
 * the body is read (whose stream callbacks run outside any request's context), and the handler is
 * called within it, so everything it awaits keeps the brand.
 */
export function useBrand(app: FastifyInstance, brand: Brand): void {
  app.decorate('brand', brand)
  app.addHook('preHandler', (_request, _reply, done) => current.run(brand, done))
}

/** The header's name, after the logo (alt = the name; the visible name is then not read twice) or our mark. */
export function brandHeader(brand: Brand): SafeHtml {
  const logo = brand.logo
  if (!logo)
    return html`<span class="brand"><span class="mark" aria-hidden="true"></span>${brand.name}</span>`
  return html`<span class="brand"
    ><img class="brand-logo" src="${logo.path}" alt="${brand.name}"${html` width="${logo.width ?? 32}" height="${logo.height ?? 32}"`} /><span aria-hidden="true">${brand.name}</span></span
  >`
}

/** With a logo, the tab's icon is the logo; without, browsers ask for /favicon.ico (ours). */
export function brandIcon(brand: Brand): SafeHtml | '' {
  return brand.logo ? html`<link rel="icon" href="${brand.logo.path}" type="${brand.logo.type}" />` : ''
}

/** The support and legal links the operator set, in a footer; nothing when none is set. */
export function brandLinks(brand: Brand, t: Pick<Messages, BrandLinkKey>): SafeHtml | '' {
  const { support, terms, privacy } = brand.links
  const links = [
    support && {
      href: support,
      text: support.startsWith('mailto:') ? t.contactSupport : t.helpAndSupport,
    },
    terms && { href: terms, text: t.termsOfService },
    privacy && { href: privacy, text: t.privacyPolicy },
  ].filter((link) => !!link)
  if (links.length === 0) return ''
  return html`<nav aria-label="${t.brandLinksMenu}">
    <ul class="brand-links">
      ${links.map((link) => html`<li><a href="${link.href}">${link.text}</a></li>`)}
    </ul>
  </nav>`
}

type BrandLinkKey =
  'brandLinksMenu' | 'contactSupport' | 'helpAndSupport' | 'termsOfService' | 'privacyPolicy'

/**
 * The footer sits on the page background, not on a card: its links take the text colour there (an
 * accent that passes on the white card may not on the grey page).
 */
const BRAND_RULES = `
.brand-logo { display: block; height: 2rem; width: auto; max-width: 12rem; object-fit: contain; }
footer.site { max-width: 30rem; margin: 0 auto 2.5rem; padding: 0 1rem; }
main:has(> .account) + footer.site { max-width: 40rem; }
ul.brand-links { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; padding: 0; margin: 0;
  font-size: 0.875rem; }
ul.brand-links a, ul.brand-links a:hover { display: inline-block; min-height: 1.5rem; color: var(--text); }
ul.brand-links a:hover { text-decoration-thickness: 2px; }
`

/** style.ts's sheet with the brand's colours and the rules its logo and footer need; as it was without. */
export function brandStylesheet(stylesheet: string, brand: Brand): string {
  const branded = brand.logo || Object.values(brand.links).some(Boolean)
  const palette = paletteRules(brand.palette)
  if (!branded && !palette) return stylesheet
  return `${stylesheet}${branded ? BRAND_RULES : ''}${palette}\n`
}
