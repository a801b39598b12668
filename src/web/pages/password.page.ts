import { html, type SafeHtml } from '../html.js'
import { inLanguage, type Ui } from '../i18n/catalogue.js'
import { page } from '../layout.js'
import { scriptAlert } from './passkey-alert.js'
import { type AccountFrame, accountPage } from './account-layout.js'
import { tooManySignInAttempts } from './rate-limited.page.js'

const newPasswordFields = (ui: Ui) => html`<label for="new_password">${ui.t.newPassword}</label>
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
  <p id="new_password_hint" class="muted small">${ui.t.atLeast8}</p>
  <label for="confirm_password">${ui.t.repeatNewPassword}</label>
  <input
    id="confirm_password"
    name="confirm_password"
    type="password"
    autocomplete="new-password"
    required
    minlength="8"
    maxlength="1024"
  />`

/** An alert a route wrote in English, in the page's language. */
const alert = (ui: Ui, message: string | undefined) =>
  message === undefined ? '' : html`<p class="alert" role="alert">${inLanguage(ui, message)}</p>`

/** /account/password: a signed-in user changes their password (the current one is asked again). */
export function changePasswordPage(options: {
  frame: AccountFrame
  csrfToken: string
  error?: string | undefined
  retryAfterSeconds?: number | undefined
  /** Passkeys on: whether password sign-in is on, and whether the user has a passkey to turn it off. */
  passwordSignIn?: { on: boolean; hasPasskeys: boolean; notice?: string | undefined } | undefined
}): string {
  const ui = options.frame.ui
  const t = ui.t
  return accountPage(
    t.changePassword,
    options.frame,
    html`${options.passwordSignIn ? passwordSignInSection(ui, options.passwordSignIn, options.csrfToken) : ''}
    <section class="card" aria-labelledby="title">
      <h1 id="title">${t.changeYourPassword}</h1>
      ${alert(ui, options.error)}
      ${alert(ui, options.retryAfterSeconds === undefined ? undefined : tooManySignInAttempts(ui, options.retryAfterSeconds))}
      <form method="post" action="/account/password">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="email" autocomplete="username" value="${options.frame.email}" />
        <label for="current_password">${t.currentPassword}</label>
        <input
          id="current_password"
          name="current_password"
          type="password"
          autocomplete="current-password"
          required
          maxlength="1024"
        />
        ${newPasswordFields(ui)}
        <p>
          <input id="disconnect_apps" name="disconnect_apps" type="checkbox" value="yes" />
          <label for="disconnect_apps">${t.disconnectAllApps}</label>
        </p>
        <p class="muted small">${t.disconnectExplained}</p>
        <div class="actions">
          <button type="submit" class="primary">${t.changePassword}</button>
        </div>
      </form>
      <p class="muted small">${t.othersSignedOut}</p>
    </section>`,
  )
}

/** Password sign-in on or off (off only with a passkey: the account is then passwordless). */
function passwordSignInSection(
  ui: Ui,
  state: { on: boolean; hasPasskeys: boolean; notice?: string | undefined },
  csrfToken: string,
) {
  const t = ui.t
  return html`<section class="card" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">${t.signingInWithPassword}</h2>
    ${state.notice ? html`<p class="notice" role="status">${inLanguage(ui, state.notice)}</p>` : ''}
    ${state.on ? html`<p>${t.passwordSignInIsOn}</p>` : html`<p>${t.passwordSignInIsOff}</p>`}
    ${
      state.on && !state.hasPasskeys
        ? html`<p class="muted small">${t.addPasskeyFirst}</p>`
        : html`<form method="post" action="/account/password/sign-in">
            <input type="hidden" name="csrf_token" value="${csrfToken}" />
            <input type="hidden" name="enabled" value="${state.on ? 'false' : 'true'}" />
            <button type="submit">${state.on ? t.turnPasswordSignInOff : t.turnPasswordSignInOn}</button>
          </form>`
    }
  </section>`
}

/** The page a one-time reset link opens: set a new password. */
export function resetPasswordPage(
  ui: Ui,
  options: {
    token: string
    csrfToken: string
    error?: string | undefined
  },
): string {
  const t = ui.t
  return page(
    ui,
    t.setNewPassword,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${t.setNewPassword}</h1>
      ${alert(ui, options.error)}
      <form method="post" action="/account/reset-password">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="token" value="${options.token}" />
        ${newPasswordFields(ui)}
        <div class="actions">
          <button type="submit" class="primary">${t.setPassword}</button>
        </div>
      </form>
      <p class="muted small">${t.resetLinkWorksOnce}</p>
    </section>`,
  )
}

/**
 * The page a reset link opens for a passwordless account: register a new passkey (the account stays
 * passwordless). Our script runs the WebAuthn ceremony and posts its answer in `response`.
 */
export function resetPasskeyPage(
  ui: Ui,
  options: {
    token: string
    csrfToken: string
    name?: string | undefined
    error?: string | undefined
  },
): string {
  const t = ui.t
  return page(
    ui,
    t.addNewPasskey,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${t.addNewPasskey}</h1>
      <p>${t.passwordlessReset}</p>
      ${alert(ui, options.error)}
      <form
        method="post"
        action="/account/reset-password"
        data-passkey="reset"
        data-options="/api/passkeys/reset-options"
      >
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="token" value="${options.token}" />
        <input type="hidden" name="response" value="" />
        <label for="name">${t.passkeyNameLabel}</label>
        <input
          id="name"
          name="name"
          type="text"
          required
          maxlength="64"
          value="${options.name ?? t.defaultResetPasskeyName}"
          aria-describedby="name_hint"
        />
        <p id="name_hint" class="muted small">${t.resetPasskeyNameHint}</p>
        <div data-passkey-only data-passkey-shown>
          ${scriptAlert(ui)}
          <div class="actions">
            <button type="submit" class="primary">${t.addPasskey}</button>
          </div>
        </div>
      </form>
      <p class="muted small">${t.resetPasskeyWorksOnce}</p>
    </section>`,
    { script: true },
  )
}

/** After a change or a reset: what happened, and where to go. */
export function passwordSetPage(
  ui: Ui,
  options: { heading: string; message: string; link: SafeHtml },
): string {
  return page(
    ui,
    options.heading,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${options.heading}</h1>
      <p class="notice" role="status">${options.message}</p>
      <p>${options.link}</p>
    </section>`,
  )
}

/** A reset link that is unknown, used or expired. */
export function resetLinkInvalidPage(ui: Ui): string {
  const t = ui.t
  return page(
    ui,
    t.linkExpired,
    html`<section class="card" aria-labelledby="title">
      <h1 id="title">${t.linkNoLongerWorks}</h1>
      <p>${t.resetLinksWorkOnce}</p>
      <p><a href="/login">${t.signIn}</a></p>
    </section>`,
  )
}
