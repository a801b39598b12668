import type { ConnectedApp } from '../../accounts/connected-apps.service.js'
import { html } from '../html.js'
import { type AccountFrame, accountPage, when } from './account-layout.js'
import { appAbout } from './app-about.js'

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

/** /account/apps: the applications the signed-in user has connected, each with a Revoke button. */
export function connectedAppsPage(options: {
  frame: AccountFrame
  apps: readonly ConnectedApp[]
  csrfToken: string
  /** The name of an application just disconnected, to confirm it. */
  revokedName?: string | undefined
}): string {
  return accountPage(
    'Connected applications',
    options.frame,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">Connected applications</h1>
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
    </section>`,
  )
}
