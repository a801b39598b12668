import type { AppDisplay } from '../../clients/standing.js'
import { html } from '../html.js'

/**
 * How every page names an application (issue 37): its name, and for an app the operator does not
 * stand behind, its host beside it in the heading; and its standing as a notice of its own (colour,
 * icon, box), not a phrase in the body text. standing.ts decides what is shown; this only draws it.
 */

/** The name, with the host beside it unless the app is verified. */
export function appTitle(app: AppDisplay, tag: 'span' | 'strong' = 'span') {
  const name =
    tag === 'strong'
      ? html`<strong class="app-name">${app.name}</strong>`
      : html`<span class="app-name">${app.name}</span>`
  return app.standing === 'verified' ? name : html`${name} <span class="client-host">(${app.host})</span>`
}

const ICONS = { verified: '✓', vouched: '◆', unverified: '!' } as const

/** The standing as a labelled box; `onDevice`: its redirect URIs are on this device (loopback). */
export function standingNotice(app: AppDisplay, options: { onDevice?: boolean; compact?: boolean } = {}) {
  const device = options.onDevice
    ? html` It runs on your computer: it receives the answer on this device.`
    : ''
  const withheld = app.nameWithheld
    ? html` It called itself by a name reserved here (this service's, or an application's it is not), so it is shown by its host.`
    : ''
  const body = options.compact
    ? ''
    : app.standing === 'verified'
      ? html`Registered with this service by its operator.`
      : app.standing === 'vouched'
        ? html`Not registered with this service. “${app.name}” is the name the application gives itself;
            <strong class="client-host">${app.host}</strong> vouches for it. Go on only if you know and trust
            ${app.host}.${withheld}${device}`
        : html`It registered itself automatically and this service has not checked who runs it; “${app.name}”
            is the name it gives itself. ${
              app.hosts.length > 0
                ? html`Its answers go to <strong class="client-host">${app.host}</strong>.`
                : html`It has <strong class="client-host">${app.host}</strong>: it fetches its answers from this service itself.`
            }${withheld}${device}`
  const label =
    app.standing === 'verified'
      ? 'Verified application.'
      : app.standing === 'vouched'
        ? `Vouched for by ${app.host}.`
        : 'Unverified application.'
  return html`<div class="standing standing-${app.standing}${options.compact ? ' compact' : ''}" role="note" data-standing="${app.standing}">
    <span class="standing-icon" aria-hidden="true">${ICONS[app.standing]}</span>
    <p><strong class="standing-label">${label}</strong> ${body}</p>
  </div>`
}
