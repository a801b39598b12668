import { isKnownScope } from '../../lib/scopes.js'
import { html } from '../html.js'
import { bidi, type Ui } from '../i18n/catalogue.js'
import { page } from '../layout.js'
import type { AppDisplay, ClientMetadata } from '../../clients/client.service.js'
import { appAbout } from './app-about.js'
import { appTitle, standingNotice } from './app-standing.js'

function destination(redirectUri: string): string {
  try {
    const url = new URL(redirectUri)
    return url.host || url.protocol
  } catch {
    return redirectUri
  }
}

/** The first letter of the application's name, as a plain mark beside it (no images to load). */
export function monogram(name: string): string {
  return [...name.trim()][0]?.toUpperCase() ?? '?'
}

/** A scope in plain words in the page's language; an unknown one as it is. */
export function describeScope(ui: Ui, scope: string): string {
  return isKnownScope(scope) ? ui.t.scopes[scope] : scope
}

/** What the application may do if allowed, each scope in plain words beside its name. */
export function scopeList(ui: Ui, scopes: readonly string[], heading = ui.t.ifYouAllow) {
  return html`<h2 id="scopes-title">${heading}</h2>
    <ul class="scopes" aria-labelledby="scopes-title">
      ${scopes.map((scope) => html`<li>${describeScope(ui, scope)} <code>${scope}</code></li>`)}
    </ul>`
}

/** An API the request names (RFC 8707), with the requested scopes it serves. */
export interface ConsentApi {
  name: string
  resource: string
  scopes: readonly string[]
}

/**
 * The consent page: who asks, for what (in plain words), who is signed in, and Allow / Deny. When
 * the request names APIs, each is shown by its registered name beside the scopes it will get there.
 */
export function consentPage(
  ui: Ui,
  options: {
    /** The application: name, host and standing (standing.ts), shown in the heading and its notice. */
    app: AppDisplay
    /** Its redirect URIs are all loopback: it runs on this device. */
    onDevice?: boolean
    /** The description and links the operator registered for the application. */
    about?: ClientMetadata
    scopes: readonly string[]
    apis?: readonly ConsentApi[]
    redirectUri: string
    email: string
    requestId: string
    csrfToken: string
    logoutCsrfToken: string
    /**
     * The user already allowed all this, but the redirect URI is a native app's (loopback or a
     * private-use scheme), which anyone can claim (RFC 8252 §8.6): one click to go on, no silent code.
     */
    confirmOnly?: boolean
  },
): string {
  const confirmOnly = options.confirmOnly === true
  const clientName = options.app.name
  const t = ui.t
  const destinationHost = html`<strong>${bidi(ui, destination(options.redirectUri))}</strong>`
  return page(
    ui,
    confirmOnly ? t.continueTitle(clientName) : t.allowTitle(clientName),
    html`<section class="card consent" aria-labelledby="title">
      <span class="monogram" aria-hidden="true">${monogram(clientName)}</span>
      ${
        confirmOnly
          ? html`<h1 id="title">${t.continueHeading(appTitle(ui, options.app))}</h1>
              <p class="confirm-notice">${t.allowedBefore(bidi(ui, clientName))}</p>`
          : html`<h1 id="title">${t.consentHeading(appTitle(ui, options.app))}</h1>`
      }
      ${standingNotice(ui, options.app, { onDevice: options.onDevice === true })}
      ${appAbout(ui, clientName, options.about)}
      ${scopeList(ui, options.scopes, confirmOnly ? t.ifYouContinue : undefined)}
      ${
        options.apis?.length
          ? html`<h2 id="apis-title">${t.onlyThroughServices}</h2>
            <ul class="apis" aria-labelledby="apis-title">
              ${options.apis.map(
                (api) =>
                  html`<li>
                    <strong class="api-name">${bidi(ui, api.name)}</strong> <code>${api.resource}</code>:
                    ${api.scopes.map((scope) => describeScope(ui, scope)).join('; ')}
                  </li>`,
              )}
            </ul>`
          : ''
      }
      <p class="muted small">
        ${(confirmOnly ? t.continuingSendsBack : t.allowingSendsBack)(bidi(ui, clientName), destinationHost)}
      </p>
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="request" value="${options.requestId}" />
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <div class="actions">
          <button type="submit" name="decision" value="allow" class="primary">${confirmOnly ? t.continue : t.allow}</button>
          <button type="submit" name="decision" value="deny">${confirmOnly ? t.cancel : t.deny}</button>
        </div>
      </form>
      <form method="post" action="/logout" class="switch-account" aria-label="${t.notYou}">
        <p>${t.signedInAsSentence(options.email)}</p>
        <input type="hidden" name="request" value="${options.requestId}" />
        <input type="hidden" name="csrf_token" value="${options.logoutCsrfToken}" />
        <button type="submit" class="small">${t.switchAccount}</button>
      </form>
    </section>`,
  )
}
