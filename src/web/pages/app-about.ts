import type { ClientMetadata } from '../../clients/client.service.js'
import { html, type SafeHtml } from '../html.js'

/**
 * What the operator registered about an application (PATCH /admin/clients): its description as
 * plain text (escaped like everything in `html`) and its links, each opening in a new tab without
 * handing this page to it (`rel="noopener noreferrer"`; the page's own Referrer-Policy is
 * no-referrer too). Nothing when none was given.
 */
export function appAbout(appName: string, about: ClientMetadata | undefined): SafeHtml | '' {
  if (!about) return ''
  const links = [
    [about.homepageUrl, 'Website'],
    [about.privacyPolicyUrl, 'Privacy policy'],
    [about.termsUrl, 'Terms of service'],
  ].filter((link): link is [string, string] => typeof link[0] === 'string')
  if (!about.description && links.length === 0) return ''
  return html`<div class="app-about">
    ${about.description ? html`<p class="app-description">${about.description}</p>` : ''}
    ${
      links.length > 0
        ? html`<ul class="app-links" aria-label="About ${appName}">
            ${links.map(
              ([href, label]) =>
                html`<li>
                  <a href="${href}" target="_blank" rel="noopener noreferrer"
                    >${label}<span class="visually-hidden"> of ${appName} (opens in a new tab)</span></a
                  >
                </li>`,
            )}
          </ul>`
        : ''
    }
  </div>`
}
