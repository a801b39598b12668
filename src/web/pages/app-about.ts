import type { ClientMetadata } from '../../clients/client.service.js'
import { html, type SafeHtml } from '../html.js'
import { bidi, type Ui } from '../i18n/catalogue.js'

/** The host a URL leads to, shown beside the Website link ("Website: printer.example"). */
function hostOf(href: string): string | undefined {
  try {
    return new URL(href).host || undefined
  } catch {
    return undefined
  }
}

const hidden = (text: string) => html`<span class="visually-hidden">${text}</span>`

/**
 * What the operator registered about an application (PATCH /admin/clients): its description as
 * plain text (escaped like everything in `html`) and its links (the Website link shows its host, so
 * a person sees where it goes), each opening in a new tab without
 * handing this page to it (`rel="noopener noreferrer"`; the page's own Referrer-Policy is
 * no-referrer too). Nothing when none was given.
 */
export function appAbout(ui: Ui, appName: string, about: ClientMetadata | undefined): SafeHtml | '' {
  if (!about) return ''
  const t = ui.t
  const links = [
    [about.homepageUrl, t.website, true],
    [about.privacyPolicyUrl, t.privacyPolicy, false],
    [about.termsUrl, t.termsOfService, false],
  ].filter((link): link is [string, string, boolean] => typeof link[0] === 'string')
  if (!about.description && links.length === 0) return ''
  const auto = ui.dir === 'rtl' ? html` dir="auto"` : ''
  return html`<div class="app-about">
    ${about.description ? html`<p class="app-description"${auto}>${about.description}</p>` : ''}
    ${
      links.length > 0
        ? html`<ul class="app-links" aria-label="${t.aboutApp(appName)}">
            ${links.map(([href, label, showHost]) => {
              const host = showHost ? hostOf(href) : undefined
              const text = html`${label}${hidden(t.linkOfApp(appName))}${host ? html`: ${bidi(ui, host)}` : ''}${hidden(t.opensInNewTab)}`
              return html`<li><a href="${href}" target="_blank" rel="noopener noreferrer">${text}</a></li>`
            })}
          </ul>`
        : ''
    }
  </div>`
}
