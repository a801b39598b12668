import type { AppDisplay, ClientMetadata } from '../../clients/client.service.js'
import { html } from '../html.js'
import { page } from '../layout.js'
import { appAbout } from './app-about.js'
import { appTitle, standingNotice } from './app-standing.js'
import { monogram, scopeList } from './consent.page.js'

/**
 * /device (RFC 8628 §3.3): where a person types the code their device shows. `userCode` prefills it
 * (verification_uri_complete); `problem` says why the last entry was not accepted.
 */
export function userCodePage(options: {
  csrfToken: string
  userCode?: string | undefined
  problem?: string | undefined
}): string {
  return page(
    'Connect a device',
    html`<section class="card device" aria-labelledby="title">
      <h1 id="title">Connect a device</h1>
      <p>Enter the code shown on the device or in the terminal you are signing in from.</p>
      ${options.problem ? html`<p class="alert" role="alert" id="code-problem">${options.problem}</p>` : ''}
      <form method="post" action="/device">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <label for="user_code">Code</label>
        <input type="text" class="user-code" id="user_code" name="user_code" value="${options.userCode ?? ''}" required
          autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" inputmode="text"
          placeholder="XXXX-XXXX" maxlength="32" ${options.problem ? html`aria-describedby="code-problem"` : ''} />
        <div class="actions"><button type="submit" class="primary">Continue</button></div>
      </form>
      <p class="muted small">Only enter a code you got from a device you are using yourself right now.</p>
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
export function deviceConsentPage(options: {
  /** The application: name, host and standing (standing.ts). */
  app: AppDisplay
  about?: ClientMetadata
  scopes: readonly string[]
  email: string
  requestId: string
  csrfToken: string
  logoutCsrfToken: string
  problem?: string | undefined
}): string {
  const clientName = options.app.name
  return page(
    `Allow ${clientName} on another device?`,
    html`<section class="card consent device-consent" aria-labelledby="title">
      <span class="monogram" aria-hidden="true">${monogram(clientName)}</span>
      <h1 id="title">
        <span class="app-title">${appTitle(options.app)}${
          // The host even for a verified app: the person checks it against the device they hold.
          options.app.standing === 'verified'
            ? html` <span class="client-host">(${options.app.host})</span>`
            : ''
        }</span>
        wants to use your account on another device
      </h1>
      <p class="unverified another-device" role="note">
        <strong>This application will run on another device, not in this browser.</strong> Allow it only if
        you started this sign-in yourself, on a device you are using now. If someone sent you this code or
        link, choose Deny: they would get access to your account.
      </p>
      ${standingNotice(options.app)}
      ${appAbout(clientName, options.about)}
      ${scopeList(options.scopes)}
      ${options.problem ? html`<p class="alert" role="alert">${options.problem}</p>` : ''}
      <form method="post" action="/device/confirm">
        <input type="hidden" name="request" value="${options.requestId}" />
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <p class="confirm-own">
          <input type="checkbox" id="started_here" name="started_here" value="yes" />
          <label for="started_here">I started this sign-in myself on a device I am using now.</label>
        </p>
        <div class="actions">
          <button type="submit" name="decision" value="allow" class="primary">Allow</button>
          <button type="submit" name="decision" value="deny">Deny</button>
        </div>
      </form>
      <form method="post" action="/logout" class="switch-account" aria-label="Not you?">
        <p>Signed in as <strong>${options.email}</strong>.</p>
        <input type="hidden" name="csrf_token" value="${options.logoutCsrfToken}" />
        <button type="submit" class="small">Switch account</button>
      </form>
    </section>`,
  )
}

/** After the answer: the person goes back to the device. */
export function deviceDonePage(allowed: boolean, clientName: string): string {
  const title = allowed ? 'Device connected' : 'Request denied'
  return page(
    title,
    html`<section class="card device" aria-labelledby="title">
      <h1 id="title">${title}</h1>
      <p>
        ${
          allowed
            ? html`${clientName} can now use your account on your device. You can close this page and go back to it. You can disconnect it at any time in your account.`
            : html`${clientName} will not get access. You can close this page.`
        }
      </p>
    </section>`,
  )
}
