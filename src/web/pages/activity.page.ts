import type { AccountEvent } from '../../accounts/connected-apps.service.js'
import { html } from '../html.js'
import { type AccountFrame, accountPage, when } from './account-layout.js'
import { STANDING_LABELS } from '../../clients/standing.js'

const REVOKE_REASONS: Record<string, string> = {
  user_revoked: 'you revoked its access',
  client_disabled: 'the service disabled the application',
  operator_revoked: 'the service revoked its access',
}

/** One event of the user's history, in words. */
function eventText(e: AccountEvent) {
  const app =
    e.app && e.app.standing !== 'verified'
      ? html`<strong>${e.app.name}</strong> <span class="client-host">(${e.app.host})</span>
          <span class="standing-tag standing-tag-${e.app.standing}">${STANDING_LABELS[e.app.standing]}</span>`
      : html`<strong>${e.appName ?? 'an application'}</strong>`
  const passkey = html`<strong>${e.name ?? 'a passkey'}</strong>`
  switch (e.type) {
    case 'consent.granted':
      return html`You allowed ${app}${e.scopes.length > 0 ? html` (<code>${e.scopes.join(' ')}</code>)` : ''}`
    case 'consent.widened':
      return html`You allowed ${app} more${e.scopes.length > 0 ? html` (now <code>${e.scopes.join(' ')}</code>)` : ''}`
    case 'grant.revoked':
      return html`Access for ${app} ended: ${REVOKE_REASONS[e.reason ?? ''] ?? e.reason ?? 'revoked'}`
    case 'password.changed':
      return html`Your password was changed`
    case 'password.reset':
      return html`Your password was set with a reset link`
    case 'passkey.registered':
      return html`Passkey ${passkey} was added`
    case 'passkey.renamed':
      return html`A passkey was renamed to ${passkey}`
    case 'passkey.removed':
      return html`Passkey ${passkey} was removed`
    case 'passkey.reset':
      return html`A reset link added passkey ${passkey}; every browser was signed out and every application disconnected`
    case 'password_sign_in.disabled':
      return html`Signing in with your password was turned off`
    case 'password_sign_in.enabled':
      return html`Signing in with your password was turned on`
    default:
      return html`${e.type}`
  }
}

/** /account/activity: the user's own consents, revocations and sign-in changes, newest first. */
export function activityPage(frame: AccountFrame, history: readonly AccountEvent[]): string {
  return accountPage(
    'Recent activity',
    frame,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">Recent activity</h1>
      ${
        history.length === 0
          ? html`<p>Nothing yet.</p>`
          : html`<ul class="account-history">
              ${history.map((e) => html`<li>${when(e.at)} — ${eventText(e)}</li>`)}
            </ul>`
      }
    </section>`,
  )
}
