import type { AppDisplay, ClientMetadata } from '../../clients/client.service.js'
import { html } from '../html.js'
import { bidi, type Ui } from '../i18n/catalogue.js'
import { page } from '../layout.js'
import { appAbout } from './app-about.js'
import { appTitle, hostOf, standingNotice } from './app-standing.js'
import { monogram, scopeList } from './consent.page.js'

/**
 * /device (RFC 8628 §3.3): where a person types the code their device shows. `userCode` prefills it
 * (verification_uri_complete); `problem` says why the last entry was not accepted.
 */
export function userCodePage(
  ui: Ui,
  options: {
    csrfToken: string
    userCode?: string | undefined
    problem?: string | undefined
  },
): string {
  const t = ui.t
  return page(
    ui,
    t.connectDevice,
    html`<section class="card device" aria-labelledby="title">
      <h1 id="title">${t.connectDevice}</h1>
      <p>${t.enterDeviceCode}</p>
      ${options.problem ? html`<p class="alert" role="alert" id="code-problem">${options.problem}</p>` : ''}
      <form method="post" action="/device">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <label for="user_code">${t.code}</label>
        <input type="text" class="user-code" id="user_code" name="user_code" value="${options.userCode ?? ''}" required
          autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" inputmode="text"
          placeholder="XXXX-XXXX" maxlength="32" ${options.problem ? html`aria-describedby="code-problem"` : ''} />
        <div class="actions"><button type="submit" class="primary">${t.continue}</button></div>
      </form>
      <p class="muted small">${t.onlyYourOwnCode}</p>
    </section>`,
  )
}

/**
 * The consent for a device request. Device-code phishing is how this grant is abused (someone sends a
 * person the code of the attacker's device), so it says plainly that the app will run on ANOTHER
 * device, names the app and its host beside its standing box (standing.ts, as on the consent page),
 * and Allow needs the person to confirm they started it
 * themselves. Never skipped by a remembered consent.
 */
export function deviceConsentPage(
  ui: Ui,
  options: {
    /** The application: name, host and standing (standing.ts). */
    app: AppDisplay
    about?: ClientMetadata
    scopes: readonly string[]
    email: string
    requestId: string
    csrfToken: string
    logoutCsrfToken: string
    problem?: string | undefined
  },
): string {
  const clientName = options.app.name
  const t = ui.t
  return page(
    ui,
    t.deviceConsentTitle(clientName),
    html`<section class="card consent device-consent" aria-labelledby="title">
      <span class="monogram" aria-hidden="true">${monogram(clientName)}</span>
      <h1 id="title">
        ${t.deviceConsentHeading(
          html`${appTitle(ui, options.app)}${
            // The host even for a verified app: the person checks it against the device they hold.
            options.app.standing === 'verified'
              ? html` <span class="client-host">(${bidi(ui, hostOf(ui, options.app))})</span>`
              : ''
          }`,
        )}
      </h1>
      <p class="unverified another-device" role="note">${t.anotherDeviceWarning}</p>
      ${standingNotice(ui, options.app)}
      ${appAbout(ui, clientName, options.about)}
      ${scopeList(ui, options.scopes)}
      ${options.problem ? html`<p class="alert" role="alert">${options.problem}</p>` : ''}
      <form method="post" action="/device/confirm">
        <input type="hidden" name="request" value="${options.requestId}" />
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <p class="confirm-own">
          <input type="checkbox" id="started_here" name="started_here" value="yes" />
          <label for="started_here">${t.startedItMyself}</label>
        </p>
        <div class="actions">
          <button type="submit" name="decision" value="allow" class="primary">${t.allow}</button>
          <button type="submit" name="decision" value="deny">${t.deny}</button>
        </div>
      </form>
      <form method="post" action="/logout" class="switch-account" aria-label="${t.notYou}">
        <p>${t.signedInAsSentence(options.email)}</p>
        <input type="hidden" name="csrf_token" value="${options.logoutCsrfToken}" />
        <button type="submit" class="small">${t.switchAccount}</button>
      </form>
    </section>`,
  )
}

/** After the answer: the person goes back to the device. */
export function deviceDonePage(ui: Ui, allowed: boolean, clientName: string): string {
  const t = ui.t
  const title = allowed ? t.deviceConnected : t.requestDenied
  return page(
    ui,
    title,
    html`<section class="card device" aria-labelledby="title">
      <h1 id="title">${title}</h1>
      <p>
        ${allowed ? t.deviceAllowed(bidi(ui, clientName)) : t.deviceDenied(bidi(ui, clientName))}
      </p>
    </section>`,
  )
}
