import type { AppDisplay } from '../../clients/standing.js'
import { html } from '../html.js'
import { bidi, type Ui } from '../i18n/catalogue.js'
import { en } from '../i18n/en.js'
import { appTitle, standingNotice } from './app-standing.js'
import { currentBrand } from '../brand.js'
import { page } from '../layout.js'
import { passkeyScriptMessages } from './passkey-alert.js'
import { tooManySignInAttempts } from './rate-limited.page.js'

export const SIGN_IN_FAILED = en.signInFailed
export const PASSKEY_SIGN_IN_FAILED = en.passkeySignInFailed
export const PASSKEY_NOT_ON_ACCOUNT = en.passkeyNotOnAccount

/** A passkey the server refused because it holds no passkey of that ID: its ID (base64url) and RP ID. */
export interface UnknownPasskey {
  credentialId: string
  rpId: string
}

/**
 * Sign in with a passkey: the browser offers passkeys in the email field's autofill (conditional
 * mediation, `autofill`) and on this button. Shown from the start, so that the page does not shift
 * when the script runs; the script hides it in a browser without WebAuthn. After the refusal of a
 * passkey the server does not hold, the form names it (`data-passkey-unknown`, with the RP ID) and
 * the script tells the browser to forget it where the browser can (signalUnknownCredential).
 */
function passkeyForm(
  ui: Ui,
  options: {
    csrfToken: string
    requestId?: string | undefined
    next?: string | undefined
    autofill: boolean
    unknownPasskey?: UnknownPasskey | undefined
  },
) {
  const unknown = options.unknownPasskey
  return html`<form
    method="post"
    action="/login/passkey"
    class="passkey-choice"
    data-passkey="sign-in"
    data-options="/api/passkeys/sign-in-options"
    ${options.autofill ? html`data-passkey-autofill` : ''}
    ${
      unknown ? html`data-passkey-unknown="${unknown.credentialId}" data-passkey-rp-id="${unknown.rpId}"` : ''
    }
  >
    <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
    ${options.requestId ? html`<input type="hidden" name="request" value="${options.requestId}" />` : ''}
    ${options.next ? html`<input type="hidden" name="next" value="${options.next}" />` : ''}
    <input type="hidden" name="response" value="" />
    <div data-passkey-only data-passkey-shown>
      <p class="alert" role="alert" data-passkey-alert hidden ${passkeyScriptMessages(ui)}></p>
      <button type="submit">${ui.t.usePasskey}</button>
    </div>
  </form>`
}

/** The sign-in form; `requestId` carries a pending authorization through the POST. */
export function signInPage(
  ui: Ui,
  options: {
    csrfToken: string
    requestId?: string | undefined
    /** A key of return-path.ts: where to go after signing in (when not continuing a request). */
    next?: string | undefined
    /** The application the person signs in for (its name, host and standing). */
    app?: AppDisplay | undefined
    email?: string
    failed?: boolean
    /** Attempts for this email are held back: say how long to wait (429). */
    retryAfterSeconds?: number
    /** Offer passkeys beside the password form (PASSKEYS on). */
    passkeys?: boolean
    /** A passkey sign-in was refused. */
    passkeyFailed?: boolean
    /** …because the server holds no passkey of that ID (removed, or never registered here). */
    unknownPasskey?: UnknownPasskey | undefined
  },
): string {
  const t = ui.t
  const passkeyRefusal = options.unknownPasskey ? t.passkeyNotOnAccount : t.passkeySignInFailed
  return page(
    ui,
    t.signInTitle,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${t.signInHeading(currentBrand().name)}</h1>
      ${
        options.app
          ? html`<p>${t.toContinueTo(appTitle(ui, options.app, 'strong'))}</p>
              ${standingNotice(ui, options.app)}`
          : ''
      }
      ${options.failed ? html`<p class="alert" role="alert">${t.signInFailed}</p>` : ''}
      ${options.passkeyFailed ? html`<p class="alert" role="alert">${passkeyRefusal}</p>` : ''}
      ${
        options.retryAfterSeconds !== undefined
          ? html`<p class="alert" role="alert">${tooManySignInAttempts(ui, options.retryAfterSeconds)}</p>`
          : ''
      }
      <form method="post" action="/login">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        ${options.requestId ? html`<input type="hidden" name="request" value="${options.requestId}" />` : ''}
        ${options.next ? html`<input type="hidden" name="next" value="${options.next}" />` : ''}
        <label for="email">${t.email}</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="${options.passkeys ? 'username webauthn' : 'username'}"
          required
          maxlength="320"
          value="${options.email ?? ''}"
        />
        <label for="password">${t.password}</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <div class="actions">
          <button type="submit" class="primary">${t.signIn}</button>
        </div>
      </form>
      ${
        options.passkeys
          ? passkeyForm(ui, {
              ...options,
              // After a refusal the page does not ask for a passkey by itself again (a browser that
              // answers autofill at once would offer the refused one again, and again): the person
              // chooses the button or the password.
              autofill: !options.failed && !options.passkeyFailed && options.retryAfterSeconds === undefined,
            })
          : ''
      }
      ${
        options.app
          ? html`<p class="muted small">
              ${t.neverSeesPassword(currentBrand().name, bidi(ui, options.app.name))}
            </p>`
          : ''
      }
    </section>`,
    { script: options.passkeys === true },
  )
}

/** /login for someone already signed in, with no request to continue: who they are, and a way out. */
export function signedInPage(ui: Ui, options: { email: string; logoutCsrfToken: string }): string {
  const t = ui.t
  return page(
    ui,
    t.signedInTitle,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${t.signedInHeading}</h1>
      <p>${t.signedInAsSentence(options.email)}</p>
      <p class="muted">${t.closeThisPage}</p>
      <p><a href="/account/apps">${t.seeConnectedApps}</a></p>
      <form method="post" action="/logout">
        <input type="hidden" name="csrf_token" value="${options.logoutCsrfToken}" />
        <button type="submit">${t.signOut}</button>
      </form>
    </section>`,
  )
}
