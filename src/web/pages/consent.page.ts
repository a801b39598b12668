import { describeScope } from '../../lib/scopes.js'
import { html } from '../html.js'
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

/** What the application may do if allowed, each scope in plain words beside its name. */
export function scopeList(scopes: readonly string[], heading = 'If you allow it, it will be able to:') {
  return html`<h2 id="scopes-title">${heading}</h2>
    <ul class="scopes" aria-labelledby="scopes-title">
      ${scopes.map((scope) => html`<li>${describeScope(scope)} <code>${scope}</code></li>`)}
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
export function consentPage(options: {
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
}): string {
  const confirmOnly = options.confirmOnly === true
  const clientName = options.app.name
  return page(
    confirmOnly ? `Continue to ${clientName}?` : `Allow ${clientName}?`,
    html`<section class="card consent" aria-labelledby="title">
      <span class="monogram" aria-hidden="true">${monogram(clientName)}</span>
      ${
        confirmOnly
          ? html`<h1 id="title">Continue to <span class="app-title">${appTitle(options.app)}?</span></h1>
              <p class="confirm-notice">
                You allowed this application before. It receives the answer on a device, where another
                program could pretend to be it: continue only if you just started this from
                ${clientName}.
              </p>`
          : html`<h1 id="title"><span class="app-title">${appTitle(options.app)}</span> wants to use your account</h1>`
      }
      ${standingNotice(options.app, { onDevice: options.onDevice === true })}
      ${appAbout(clientName, options.about)}
      ${scopeList(options.scopes, confirmOnly ? 'If you continue, it will be able to:' : undefined)}
      ${
        options.apis?.length
          ? html`<h2 id="apis-title">Only through these services:</h2>
            <ul class="apis" aria-labelledby="apis-title">
              ${options.apis.map(
                (api) =>
                  html`<li>
                    <strong class="api-name">${api.name}</strong> <code>${api.resource}</code>:
                    ${api.scopes.map(describeScope).join('; ')}
                  </li>`,
              )}
            </ul>`
          : ''
      }
      <p class="muted small">
        ${clientName} will not see your password. ${confirmOnly ? 'Continuing' : 'Allowing'} sends you back to
        <strong>${destination(options.redirectUri)}</strong>. You can disconnect the application at any
        time in your account.
      </p>
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="request" value="${options.requestId}" />
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <div class="actions">
          <button type="submit" name="decision" value="allow" class="primary">${confirmOnly ? 'Continue' : 'Allow'}</button>
          <button type="submit" name="decision" value="deny">${confirmOnly ? 'Cancel' : 'Deny'}</button>
        </div>
      </form>
      <form method="post" action="/logout" class="switch-account" aria-label="Not you?">
        <p>Signed in as <strong>${options.email}</strong>.</p>
        <input type="hidden" name="request" value="${options.requestId}" />
        <input type="hidden" name="csrf_token" value="${options.logoutCsrfToken}" />
        <button type="submit" class="small">Switch account</button>
      </form>
    </section>`,
  )
}
