import { html } from '../html.js'
import { page, SERVICE_NAME } from '../layout.js'
import { tooManySignInAttempts } from './rate-limited.page.js'

export const SIGN_IN_FAILED = 'Email or password is incorrect'
export const PASSKEY_SIGN_IN_FAILED = 'That passkey did not sign you in. Try again, or use your password.'

/**
 * Sign in with a passkey: the browser offers passkeys in the email field's autofill (conditional
 * mediation, `autofill`) and on this button. Shown from the start, so that the page does not shift
 * when the script runs; the script hides it in a browser without WebAuthn.
 */
function passkeyForm(options: {
  csrfToken: string
  requestId?: string | undefined
  next?: string | undefined
  autofill: boolean
}) {
  return html`<form
    method="post"
    action="/login/passkey"
    class="passkey-choice"
    data-passkey="sign-in"
    data-options="/api/passkeys/sign-in-options"
    ${options.autofill ? html`data-passkey-autofill` : ''}
  >
    <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
    ${options.requestId ? html`<input type="hidden" name="request" value="${options.requestId}" />` : ''}
    ${options.next ? html`<input type="hidden" name="next" value="${options.next}" />` : ''}
    <input type="hidden" name="response" value="" />
    <div data-passkey-only data-passkey-shown>
      <p class="alert" role="alert" data-passkey-alert hidden></p>
      <button type="submit">Use a passkey</button>
    </div>
  </form>`
}

/** The sign-in form; `requestId` carries a pending authorization through the POST. */
export function signInPage(options: {
  csrfToken: string
  requestId?: string | undefined
  /** A key of return-path.ts: where to go after signing in (when not continuing a request). */
  next?: string | undefined
  clientName?: string
  email?: string
  failed?: boolean
  /** Attempts for this email are held back: say how long to wait (429). */
  retryAfterSeconds?: number
  /** Offer passkeys beside the password form (PASSKEYS on). */
  passkeys?: boolean
  /** A passkey sign-in was refused. */
  passkeyFailed?: boolean
}): string {
  return page(
    'Sign in',
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">Sign in to ${SERVICE_NAME}</h1>
      ${
        options.clientName
          ? html`<p>to continue to <strong class="app-name">${options.clientName}</strong></p>`
          : ''
      }
      ${options.failed ? html`<p class="alert" role="alert">${SIGN_IN_FAILED}</p>` : ''}
      ${options.passkeyFailed ? html`<p class="alert" role="alert">${PASSKEY_SIGN_IN_FAILED}</p>` : ''}
      ${
        options.retryAfterSeconds !== undefined
          ? html`<p class="alert" role="alert">${tooManySignInAttempts(options.retryAfterSeconds)}</p>`
          : ''
      }
      <form method="post" action="/login">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        ${options.requestId ? html`<input type="hidden" name="request" value="${options.requestId}" />` : ''}
        ${options.next ? html`<input type="hidden" name="next" value="${options.next}" />` : ''}
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="${options.passkeys ? 'username webauthn' : 'username'}"
          required
          maxlength="320"
          value="${options.email ?? ''}"
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <div class="actions">
          <button type="submit" class="primary">Sign in</button>
        </div>
      </form>
      ${
        options.passkeys
          ? passkeyForm({
              ...options,
              // After a refusal the browser does not offer passkeys by itself again: the person chooses.
              autofill: !options.failed && !options.passkeyFailed && options.retryAfterSeconds === undefined,
            })
          : ''
      }
      ${
        options.clientName
          ? html`<p class="muted small">
              ${SERVICE_NAME} checks your password; ${options.clientName} never sees it.
            </p>`
          : ''
      }
    </section>`,
    { script: options.passkeys === true },
  )
}

/** /login for someone already signed in, with no request to continue: who they are, and a way out. */
export function signedInPage(options: { email: string; logoutCsrfToken: string }): string {
  return page(
    'Signed in',
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">You are signed in</h1>
      <p>Signed in as <strong>${options.email}</strong>.</p>
      <p class="muted">You can close this page and return to the application you came from.</p>
      <p><a href="/account/apps">See the applications connected to your account</a></p>
      <form method="post" action="/logout">
        <input type="hidden" name="csrf_token" value="${options.logoutCsrfToken}" />
        <button type="submit">Sign out</button>
      </form>
    </section>`,
  )
}
