import { html, type SafeHtml } from '../html.js'
import { page } from '../layout.js'
import { type AccountFrame, accountPage } from './account-layout.js'
import { tooManySignInAttempts } from './rate-limited.page.js'

const newPasswordFields = html`<label for="new_password">New password</label>
  <input
    id="new_password"
    name="new_password"
    type="password"
    autocomplete="new-password"
    required
    minlength="8"
    maxlength="1024"
    aria-describedby="new_password_hint"
  />
  <p id="new_password_hint" class="muted small">At least 8 characters.</p>
  <label for="confirm_password">Repeat the new password</label>
  <input
    id="confirm_password"
    name="confirm_password"
    type="password"
    autocomplete="new-password"
    required
    minlength="8"
    maxlength="1024"
  />`

const alert = (message: string | undefined) =>
  message === undefined ? '' : html`<p class="alert" role="alert">${message}</p>`

/** /account/password: a signed-in user changes their password (the current one is asked again). */
export function changePasswordPage(options: {
  frame: AccountFrame
  csrfToken: string
  error?: string | undefined
  retryAfterSeconds?: number | undefined
  /** Passkeys on: whether password sign-in is on, and whether the user has a passkey to turn it off. */
  passwordSignIn?: { on: boolean; hasPasskeys: boolean; notice?: string | undefined } | undefined
}): string {
  return accountPage(
    'Change password',
    options.frame,
    html`${options.passwordSignIn ? passwordSignInSection(options.passwordSignIn, options.csrfToken) : ''}
    <section class="card" aria-labelledby="title">
      <h1 id="title">Change your password</h1>
      ${alert(options.error)}
      ${alert(options.retryAfterSeconds === undefined ? undefined : tooManySignInAttempts(options.retryAfterSeconds))}
      <form method="post" action="/account/password">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="email" autocomplete="username" value="${options.frame.email}" />
        <label for="current_password">Current password</label>
        <input
          id="current_password"
          name="current_password"
          type="password"
          autocomplete="current-password"
          required
          maxlength="1024"
        />
        ${newPasswordFields}
        <p>
          <input id="disconnect_apps" name="disconnect_apps" type="checkbox" value="yes" />
          <label for="disconnect_apps">Disconnect all applications</label>
        </p>
        <p class="muted small">
          Applications you connected keep working after a password change unless you disconnect them
          here; do so if someone else may have used your account.
        </p>
        <div class="actions">
          <button type="submit" class="primary">Change password</button>
        </div>
      </form>
      <p class="muted small">Every other browser signed in to your account is signed out.</p>
    </section>`,
  )
}

/** Password sign-in on or off (off only with a passkey: the account is then passwordless). */
function passwordSignInSection(
  state: { on: boolean; hasPasskeys: boolean; notice?: string | undefined },
  csrfToken: string,
) {
  return html`<section class="card" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">Signing in with your password</h2>
    ${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
    ${
      state.on
        ? html`<p>Your password signs you in, as do your passkeys.</p>`
        : html`<p>Password sign-in is off: only your passkeys sign you in. The password form refuses your account.</p>`
    }
    ${
      state.on && !state.hasPasskeys
        ? html`<p class="muted small">
            To sign in with passkeys only, <a href="/account/passkeys">add a passkey</a> first.
          </p>`
        : html`<form method="post" action="/account/password/sign-in">
            <input type="hidden" name="csrf_token" value="${csrfToken}" />
            <input type="hidden" name="enabled" value="${state.on ? 'false' : 'true'}" />
            <button type="submit">${state.on ? 'Turn password sign-in off' : 'Turn password sign-in on'}</button>
          </form>`
    }
  </section>`
}

/** The page a one-time reset link opens: set a new password. */
export function resetPasswordPage(options: {
  token: string
  csrfToken: string
  error?: string | undefined
}): string {
  return page(
    'Set a new password',
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">Set a new password</h1>
      ${alert(options.error)}
      <form method="post" action="/account/reset-password">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="token" value="${options.token}" />
        ${newPasswordFields}
        <div class="actions">
          <button type="submit" class="primary">Set password</button>
        </div>
      </form>
      <p class="muted small">
        This link works once. Setting a password signs you out everywhere and disconnects every
        application connected to your account.
      </p>
    </section>`,
  )
}

/**
 * The page a reset link opens for a passwordless account: register a new passkey (the account stays
 * passwordless). Our script runs the WebAuthn ceremony and posts its answer in `response`.
 */
export function resetPasskeyPage(options: {
  token: string
  csrfToken: string
  name?: string | undefined
  error?: string | undefined
}): string {
  return page(
    'Add a new passkey',
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">Add a new passkey</h1>
      <p>Your account signs in with passkeys only. Add a passkey on this device to get back in.</p>
      ${alert(options.error)}
      <form
        method="post"
        action="/account/reset-password"
        data-passkey="reset"
        data-options="/api/passkeys/reset-options"
      >
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="token" value="${options.token}" />
        <input type="hidden" name="response" value="" />
        <label for="name">Name of the passkey</label>
        <input
          id="name"
          name="name"
          type="text"
          required
          maxlength="64"
          value="${options.name ?? 'Passkey'}"
          aria-describedby="name_hint"
        />
        <p id="name_hint" class="muted small">So you can tell your passkeys apart, e.g. "Work laptop".</p>
        <div data-passkey-only data-passkey-shown>
          <p class="alert" role="alert" data-passkey-alert hidden></p>
          <div class="actions">
            <button type="submit" class="primary">Add a passkey</button>
          </div>
        </div>
      </form>
      <p class="muted small">
        This link works once. Adding the passkey signs you out everywhere and disconnects every
        application connected to your account. A browser without passkeys cannot use this link:
        open it on a device that has them.
      </p>
    </section>`,
    { script: true },
  )
}

/** After a change or a reset: what happened, and where to go. */
export function passwordSetPage(options: { heading: string; message: string; link: SafeHtml }): string {
  return page(
    options.heading,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${options.heading}</h1>
      <p class="notice" role="status">${options.message}</p>
      <p>${options.link}</p>
    </section>`,
  )
}

/** A reset link that is unknown, used or expired. */
export function resetLinkInvalidPage(): string {
  return page(
    'Link expired',
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">This link no longer works</h1>
      <p>Password-reset links work once, for 30 minutes. Ask for a new one.</p>
      <p><a href="/login">Sign in</a></p>
    </section>`,
  )
}
