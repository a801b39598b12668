import type { AccountEvent, ConnectedApp } from '../../accounts/connected-apps.service.js'
import { html } from '../html.js'
import { page } from '../layout.js'
import { appAbout } from './app-about.js'

/** A moment in UTC, readable and unambiguous, inside <time> for machines. */
function when(date: Date) {
  const iso = date.toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
}

function appEntry(app: ConnectedApp, csrfToken: string) {
  return html`<li class="connected-app">
    <h2>${app.name}</h2>
    ${appAbout(app.name, app.about)}
    <p>Can:</p>
    <ul class="scopes">
      ${app.scopes.map((s) => html`<li>${s.description} <code>${s.scope}</code></li>`)}
    </ul>
    ${
      app.resources.length > 0
        ? html`<p>Through:</p>
          <ul class="apis">
            ${app.resources.map((r) => html`<li><strong class="api-name">${r.name}</strong> <code>${r.resource}</code></li>`)}
          </ul>`
        : ''
    }
    <dl>
      <dt>First authorized</dt>
      <dd>${when(app.authorizedAt)}</dd>
      <dt>Last used</dt>
      <dd>${app.lastUsedAt ? when(app.lastUsedAt) : 'never'}</dd>
    </dl>
    <form method="post" action="/account/apps/${encodeURIComponent(app.clientId)}/revoke">
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <button type="submit" class="danger" aria-label="Revoke ${app.name}">Revoke</button>
    </form>
  </li>`
}

const REVOKE_REASONS: Record<string, string> = {
  user_revoked: 'you revoked its access',
  client_disabled: 'the service disabled the application',
  operator_revoked: 'the service revoked its access',
}

/** One event of the user's history, in words. */
function eventText(e: AccountEvent) {
  const app = html`<strong>${e.appName ?? 'an application'}</strong>`
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
    default:
      return html`${e.type}`
  }
}

function historySection(history: readonly AccountEvent[]) {
  return html`<section class="card" aria-labelledby="history-title">
    <h2 id="history-title">Recent activity</h2>
    ${
      history.length === 0
        ? html`<p>Nothing yet.</p>`
        : html`<ul class="account-history">
            ${history.map((e) => html`<li>${when(e.at)} — ${eventText(e)}</li>`)}
          </ul>`
    }
  </section>`
}

/** /account/apps: the applications the signed-in user has connected, each with a Revoke button. */
export function connectedAppsPage(options: {
  email: string
  apps: readonly ConnectedApp[]
  csrfToken: string
  /** The name of an application just disconnected, to confirm it. */
  revokedName?: string | undefined
  /** The user's own consents and revocations, newest first. */
  history?: readonly AccountEvent[] | undefined
}): string {
  return page(
    'Connected applications',
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">Connected applications</h1>
      <p class="muted">Signed in as <strong>${options.email}</strong>.</p>
      ${
        options.revokedName !== undefined
          ? html`<p class="notice" role="status">
              You revoked access for <strong>${options.revokedName}</strong>. It can no longer use your account.
            </p>`
          : ''
      }
      ${
        options.apps.length === 0
          ? html`<p>No application is connected to your account.</p>`
          : html`<p>These applications can use your account. Revoking one takes effect at once.</p>
              <ul class="connected-apps">
                ${options.apps.map((app) => appEntry(app, options.csrfToken))}
              </ul>`
      }
      <p><a href="/account/password">Change your password</a></p>
    </section>
    ${options.history ? historySection(options.history) : ''}`,
  )
}
