import type { AccountEvent } from '../../accounts/connected-apps.service.js'
import { html } from '../html.js'
import { bidi, type Ui } from '../i18n/catalogue.js'
import { when } from '../i18n/format.js'
import { type AccountFrame, accountPage } from './account-layout.js'
import { hostOf } from './app-standing.js'

/** One event of the user's history, in words. */
function eventText(ui: Ui, e: AccountEvent) {
  const t = ui.t
  const app =
    e.app && e.app.standing !== 'verified'
      ? html`<strong>${bidi(ui, e.app.name)}</strong> <span class="client-host">(${bidi(ui, hostOf(ui, e.app))})</span>
          <span class="standing-tag standing-tag-${e.app.standing}">${t.standingTags[e.app.standing]}</span>`
      : html`<strong>${e.appName ? bidi(ui, e.appName) : t.anApplication}</strong>`
  const passkey = html`<strong>${e.name ? bidi(ui, e.name) : t.aPasskey}</strong>`
  const scopes = e.scopes.length > 0 ? html`<code>${e.scopes.join(' ')}</code>` : ''
  const reasons: Record<string, string> = t.revokeReasons
  switch (e.type) {
    case 'consent.granted':
      return t.eventConsentGranted(app, scopes ? html` (${scopes})` : '')
    case 'consent.widened':
      return t.eventConsentWidened(app, scopes)
    case 'grant.revoked':
      return t.eventGrantRevoked(
        app,
        (Object.hasOwn(reasons, e.reason ?? '') ? reasons[e.reason!] : e.reason) ?? t.revokeReasons.other,
      )
    case 'password.changed':
      return t.eventPasswordChanged
    case 'password.reset':
      return t.eventPasswordReset
    case 'passkey.registered':
      return t.eventPasskeyRegistered(passkey)
    case 'passkey.renamed':
      return t.eventPasskeyRenamed(passkey)
    case 'passkey.removed':
      return t.eventPasskeyRemoved(passkey)
    case 'passkey.reset':
      return t.eventPasskeyReset(passkey)
    case 'password_sign_in.disabled':
      return t.eventPasswordSignInOff
    case 'password_sign_in.enabled':
      return t.eventPasswordSignInOn
    default:
      return html`${e.type}`
  }
}

/** /account/activity: the user's own consents, revocations and sign-in changes, newest first. */
export function activityPage(frame: AccountFrame, history: readonly AccountEvent[]): string {
  const ui = frame.ui
  return accountPage(
    ui.t.recentActivity,
    frame,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${ui.t.recentActivity}</h1>
      ${
        history.length === 0
          ? html`<p>${ui.t.nothingYet}</p>`
          : html`<ul class="account-history">
              ${history.map((e) => html`<li>${when(ui.locale, e.at)} — ${eventText(ui, e)}</li>`)}
            </ul>`
      }
    </section>`,
  )
}
