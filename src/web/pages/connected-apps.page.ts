import type { ConnectedApp } from '../../accounts/connected-apps.service.js'
import { html } from '../html.js'
import type { Ui } from '../i18n/catalogue.js'
import { when } from '../i18n/format.js'
import { type AccountFrame, accountPage } from './account-layout.js'
import { describeScope } from './consent.page.js'
import { appAbout } from './app-about.js'
import { appTitle, hostOf, standingNotice } from './app-standing.js'
import type { Standing } from '../../clients/standing.js'

/** Whether the app holds a live token now, or signed out with the consent still standing. */
function appState(ui: Ui, app: ConnectedApp) {
  return app.connected
    ? html`<p class="app-state connected">${ui.t.appConnected}</p>`
    : html`<p class="app-state signed-out">${ui.t.appSignedOut}</p>`
}

function appEntry(ui: Ui, app: ConnectedApp, csrfToken: string) {
  const t = ui.t
  return html`<li class="connected-app" data-standing="${app.display.standing}">
    <h2>${appTitle(ui, app.display)}</h2>
    ${standingNotice(ui, app.display, { compact: true })}
    ${appState(ui, app)}
    ${
      app.onAnotherDevice
        ? html`<p class="another-device">
            ${t.onAnotherDevice(html`<strong class="client-host">${hostOf(ui, app.display)}</strong>`)}
          </p>`
        : ''
    }
    ${appAbout(ui, app.name, app.about)}
    <p>${t.appCan}</p>
    <ul class="scopes">
      ${app.scopes.map((s) => html`<li>${describeScope(ui, s.scope)} <code>${s.scope}</code></li>`)}
    </ul>
    ${
      app.resources.length > 0
        ? html`<p>${t.appThrough}</p>
          <ul class="apis">
            ${app.resources.map((r) => html`<li><strong class="api-name">${r.name}</strong> <code>${r.resource}</code></li>`)}
          </ul>`
        : ''
    }
    <dl>
      <dt>${t.firstAuthorized}</dt>
      <dd>${when(ui.locale, app.authorizedAt)}</dd>
      <dt>${t.lastUsed}</dt>
      <dd>${app.lastUsedAt ? when(ui.locale, app.lastUsedAt) : t.never}</dd>
    </dl>
    <form method="post" action="/account/apps/${encodeURIComponent(app.clientId)}/revoke">
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <button type="submit" class="danger" aria-label="${t.revokeApp(app.name)}">${t.revoke}</button>
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
  const ui = options.frame.ui
  const t = ui.t
  return accountPage(
    t.connectedAppsTitle,
    options.frame,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${t.connectedAppsTitle}</h1>
      ${
        options.revokedName !== undefined
          ? html`<p class="notice" role="status">${t.revokedNotice(options.revokedName)}</p>`
          : ''
      }
      ${
        options.apps.length === 0
          ? html`<p>${t.noConnectedApps}</p>`
          : html`<p>${t.connectedAppsIntro}</p>
              <ul class="connected-apps">
                ${byStanding(options.apps).map((app) => appEntry(ui, app, options.csrfToken))}
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
