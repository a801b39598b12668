import { brandFooter, brandHeader, brandIcon, currentBrand } from './brand.js'
import { html, type SafeHtml } from './html.js'

/** The software's own name: the default brand, and a name no app may borrow (reserved-names.ts). */
export { SERVICE_NAME } from './brand.js'

/**
 * The page shell: one stylesheet of ours, no inline script or style; `script` adds our one script
 * (passkeys), deferred, for pages whose CSP allows it (allowOwnScript). The name, logo and footer
 * links are the operator's brand (brand.ts).
 */
export function page(title: string, body: SafeHtml, options: { script?: boolean } = {}): string {
  const brand = currentBrand()
  return html`<!doctype html>
    <html lang="en">
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
        <main>${body}</main>${brandFooter(brand)}
      </body>
    </html> `.value
}

/** A readable error page: what went wrong, the RFC error code, and what the person can do. */
export function errorPage(options: {
  title: string
  message: string
  code?: string
  advice?: string
}): string {
  return page(
    options.title,
    html`<section class="card error" aria-labelledby="error-title">
      <h1 id="error-title">${options.title}</h1>
      <p>${options.message}</p>
      ${options.code ? html`<p class="code">Error code: <code>${options.code}</code></p>` : ''}
      ${options.advice ? html`<p>${options.advice}</p>` : ''}
    </section>`,
  )
}
