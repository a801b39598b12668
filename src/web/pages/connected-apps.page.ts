import type { ConnectedApp } from '../../accounts/connected-apps.service.js'
import { html } from '../html.js'
import { type AccountFrame, accountPage, when } from './account-layout.js'
import { appAbout } from './app-about.js'
import { appTitle, standingNotice } from './app-standing.js'
import type { Standing } from '../../clients/standing.js'

/** Whether the app holds a live token now, or signed out with the consent still standing. */
function appState(app: ConnectedApp) {
  return app.connected
    ? html`<p class="app-state connected">Connected: it can use your account now.</p>`
    : html`<p class="app-state signed-out">
        Signed out: it holds no access now, but it may sign in again without asking you until you revoke
        it (revoking forgets that you allowed it).
      </p>`
}

function appEntry(app: ConnectedApp, csrfToken: string) {
  return html`<li class="connected-app" data-standing="${app.display.standing}">
    <h2>${appTitle(app.display)}</h2>
    ${standingNotice(app.display, { compact: true })}
    ${appState(app)}
    ${
      app.onAnotherDevice
        ? html`<p class="another-device">
            Runs on another device: you connected it with a code. Its host:
            <strong class="client-host">${app.display.host}</strong>.
          </p>`
        : ''
    }
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
          : html`<p>
                These applications have your permission to use your account. Revoking one takes effect at
                once.
              </p>
              <ul class="connected-apps">
                ${byStanding(options.apps).map((app) => appEntry(app, options.csrfToken))}
              </ul>`
      }
    </section>`,
  )
}

const ORDER: Record<Standing, number> = { verified: 0, vouched: 1, unverified: 2 }

/** Verified apps first, then those vouched for by their host, then unverified ones; else as listed. */
function byStanding(apps: readonly ConnectedApp[]): ConnectedApp[] {
  return [...apps].sort((a, b) => ORDER[a.display.standing] - ORDER[b.display.standing])
}
