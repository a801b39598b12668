import { type Brand, brandHeader, brandIcon, brandLinks, currentBrand } from './brand.js'
import { html, type SafeHtml } from './html.js'
import { translated, type Ui } from './i18n/catalogue.js'
import { LANGUAGE_NAMES, LOCALES } from './i18n/locales.js'
import { languageLink } from './i18n/language.routes.js'

/** The software's own name: the default brand, and a name no app may borrow (reserved-names.ts). */
export { SERVICE_NAME } from './brand.js'

/**
 * The one footer: the operator's help and legal links when set (brand.ts), then the language menu, a
 * link per language (no script needed), the current one marked.
 */
function footer(ui: Ui, brand: Brand) {
  return html`<footer class="site">
    ${brandLinks(brand, ui.t)}
    <nav aria-label="${ui.t.languageMenu}">
      <ul class="languages">
        ${LOCALES.map(
          (locale) =>
            html`<li><a href="${languageLink(locale, ui.back)}" lang="${locale}" hreflang="${locale}"${
              locale === ui.locale ? html` aria-current="true"` : ''
            }>${LANGUAGE_NAMES[locale]}</a></li>`,
        )}
      </ul>
    </nav>
  </footer>`
}

/**
 * The page shell: one stylesheet of ours, no inline script or style; `script` adds our one script
 * (passkeys), deferred, for pages whose CSP allows it (allowOwnScript). The page's language and, for
 * a right-to-left one, its direction (left to right is HTML's default) are on <html>. The name, logo
 * and footer links are the operator's brand (brand.ts).
 */
export function page(ui: Ui, title: string, body: SafeHtml, options: { script?: boolean } = {}): string {
  const brand = currentBrand()
  return html`<!doctype html>
    <html lang="${ui.locale}"${ui.dir === 'rtl' ? html` dir="rtl"` : ''}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>${title} · ${brand.name}</title>
        <link rel="stylesheet" href="/static/style.css" />${brandIcon(brand)}
        ${options.script ? html`<script src="/static/passkeys.js" defer></script>` : ''}
      </head>
      <body>
        <header class="site">
          ${brandHeader(brand)}
        </header>
        <main>${body}</main>
        ${footer(ui, brand)}
      </body>
    </html> `.value
}

/**
 * A readable error page: what went wrong, the RFC error code, and what the person can do. `message`
 * is in the page's language; `detail` is a route's message in English: translated when the catalogue
 * has it, else (an OAuth error's description, for the developer) shown as it is, marked as English.
 */
export function errorPage(
  ui: Ui,
  options: {
    title: string
    message?: string
    detail?: string
    code?: string | undefined
    advice?: string
  },
): string {
  const message =
    options.message ??
    (options.detail === undefined ? '' : (translated(ui, options.detail) ?? options.detail))
  const english = ui.locale !== 'en' && options.message === undefined && message === options.detail
  return page(
    ui,
    options.title,
    html`<section class="card error" aria-labelledby="error-title">
      <h1 id="error-title">${options.title}</h1>
      ${english ? html`<p>${ui.t.detailsInEnglish}</p><p lang="en" dir="ltr">${message}</p>` : html`<p>${message}</p>`}
      ${options.code ? html`<p class="code">${ui.t.errorCode(options.code)}</p>` : ''}
      ${options.advice ? html`<p>${options.advice}</p>` : ''}
    </section>`,
  )
}
