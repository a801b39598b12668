import { type AppDisplay, NO_HOST } from '../../clients/standing.js'
import { html } from '../html.js'
import { bidi, type Ui } from '../i18n/catalogue.js'

/**
 * How every page names an application (issue 37): its name, and for an app the operator does not
 * stand behind, its host beside it in the heading; and its standing as a notice of its own (colour,
 * icon, box), not a phrase in the body text. standing.ts decides what is shown; this only draws it.
 * On a right-to-left page the name and host are isolated (dir="auto"): they are the app's, not ours.
 */

/**
 * The app's host(s) as shown: standing.ts's text, or for an app with no redirect URI (a device-only
 * client, RFC 8628) the page's words for "no web address".
 */
export function hostOf(ui: Ui, app: Pick<AppDisplay, 'host'>): string {
  return app.host === NO_HOST ? ui.t.noWebAddress : app.host
}

/** The name, with the host beside it unless the app is verified. */
export function appTitle(ui: Ui, app: AppDisplay, tag: 'span' | 'strong' = 'span') {
  const auto = ui.dir === 'rtl' ? html` dir="auto"` : ''
  const name =
    tag === 'strong'
      ? html`<strong class="app-name"${auto}>${app.name}</strong>`
      : html`<span class="app-name"${auto}>${app.name}</span>`
  return app.standing === 'verified'
    ? name
    : html`${name} <span class="client-host"${auto}>(${hostOf(ui, app)})</span>`
}

const ICONS = { verified: '✓', vouched: '◆', unverified: '!' } as const

/** The standing as a labelled box; `onDevice`: its redirect URIs are on this device (loopback). */
export function standingNotice(
  ui: Ui,
  app: AppDisplay,
  options: { onDevice?: boolean; compact?: boolean } = {},
) {
  const t = ui.t
  const device = options.onDevice ? ` ${t.runsOnThisDevice}` : ''
  const withheld = app.nameWithheld ? ` ${t.nameWithheld}` : ''
  const host = html`<strong class="client-host">${bidi(ui, hostOf(ui, app))}</strong>`
  const body = options.compact
    ? ''
    : app.standing === 'verified'
      ? t.verifiedBody
      : app.standing === 'vouched'
        ? html`${t.vouchedBody(bidi(ui, app.name), host, bidi(ui, app.host))}${withheld}${device}`
        : app.host !== NO_HOST
          ? html`${t.unverifiedBody(bidi(ui, app.name), host)}${withheld}${device}`
          : html`${t.unverifiedBodyNoAddress(bidi(ui, app.name), host)}${withheld}${device}`
  const label =
    app.standing === 'verified'
      ? t.verifiedLabel
      : app.standing === 'vouched'
        ? t.vouchedLabel(app.host)
        : t.unverifiedLabel
  return html`<div class="standing standing-${app.standing}${options.compact ? ' compact' : ''}" role="note" data-standing="${app.standing}">
    <span class="standing-icon" aria-hidden="true">${ICONS[app.standing]}</span>
    <p><strong class="standing-label">${label}</strong> ${body}</p>
  </div>`
}
