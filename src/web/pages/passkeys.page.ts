import type { Passkey } from '../../accounts/passkey.service.js'
import { html } from '../html.js'
import type { Messages, Ui } from '../i18n/catalogue.js'
import { inLanguage } from '../i18n/catalogue.js'
import { when } from '../i18n/format.js'
import { type AccountFrame, accountPage } from './account-layout.js'
import { scriptAlert } from './passkey-alert.js'
import { tooManySignInAttempts } from './rate-limited.page.js'

/** The notices of ?done=…, by the catalogue's key of each. */
export const PASSKEY_NOTICES = {
  added: 'passkeyAdded',
  renamed: 'passkeyRenamed',
  removed: 'passkeyRemoved',
  confirmed: 'passkeyConfirmed',
} as const satisfies Record<string, keyof Messages>

export type PasskeyNotice = keyof typeof PASSKEY_NOTICES

/** An alert a route wrote in English, in the page's language. */
const alert = (ui: Ui, message: string | undefined) =>
  message === undefined ? '' : html`<p class="alert" role="alert">${inLanguage(ui, message)}</p>`

function passkeyEntry(ui: Ui, p: Passkey, csrfToken: string) {
  const t = ui.t
  const path = `/account/passkeys/${encodeURIComponent(p.id)}`
  return html`<li class="passkey">
    <h2${ui.dir === 'rtl' ? html` dir="auto"` : ''}>${p.name}</h2>
    <dl>
      <dt>${t.added}</dt>
      <dd>${when(ui.locale, p.createdAt)}</dd>
      <dt>${t.lastUsed}</dt>
      <dd>${p.lastUsedAt ? when(ui.locale, p.lastUsedAt) : t.never}</dd>
      <dt>${t.kept}</dt>
      <dd>${p.backedUp ? t.keptSynced : t.keptOnOneDevice}</dd>
    </dl>
    <form method="post" action="${path}/rename">
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <label for="name-${p.id}">${t.newNameFor(p.name)}</label>
      <input id="name-${p.id}" name="name" type="text" required maxlength="64" value="${p.name}"${ui.dir === 'rtl' ? html` dir="auto"` : ''} />
      <button type="submit" class="small">${t.rename}</button>
    </form>
    <form method="post" action="${path}/remove">
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <button type="submit" class="small danger" aria-label="${t.removePasskey(p.name)}">${t.remove}</button>
    </form>
  </li>`
}

function addSection(
  ui: Ui,
  options: {
    csrfToken: string
    fresh: boolean
    hasPasskeys: boolean
    retryAfterSeconds?: number | undefined
    confirmError?: string | undefined
  },
) {
  const t = ui.t
  if (options.fresh)
    return html`<section class="card" aria-labelledby="add-title">
      <h2 id="add-title">${t.addPasskey}</h2>
      <p>${t.passkeyExplained}</p>
      <form method="post" action="/account/passkeys" data-passkey="register" data-options="/api/account/passkeys/options">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="response" value="" />
        ${scriptAlert(ui)}
        <label for="passkey-name">${t.name}</label>
        <input id="passkey-name" name="name" type="text" required maxlength="64" value="${t.defaultPasskeyName}"
          aria-describedby="passkey-name-hint" />
        <p id="passkey-name-hint" class="muted small">${t.passkeyNameHint}</p>
        <div class="actions">
          <button type="submit" class="primary">${t.addPasskey}</button>
        </div>
      </form>
    </section>`
  return html`<section class="card" aria-labelledby="add-title">
    <h2 id="add-title">${t.addPasskey}</h2>
    <p>${t.confirmItIsYou}</p>
    ${alert(ui, options.confirmError)}
    ${alert(ui, options.retryAfterSeconds === undefined ? undefined : tooManySignInAttempts(ui, options.retryAfterSeconds))}
    <form method="post" action="/account/passkeys/confirm">
      <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
      <label for="confirm-password">${t.yourPassword}</label>
      <input id="confirm-password" name="password" type="password" autocomplete="current-password" required
        maxlength="1024" />
      <div class="actions">
        <button type="submit" class="primary">${t.confirm}</button>
      </div>
    </form>
    ${
      options.hasPasskeys
        ? html`<form method="post" action="/account/passkeys/confirm-passkey" class="passkey-choice"
            data-passkey="reauthenticate" data-options="/api/account/passkeys/confirm-options">
            <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
            <input type="hidden" name="response" value="" />
            ${scriptAlert(ui)}
            <button type="submit">${t.confirmWithPasskey}</button>
          </form>`
        : ''
    }
  </section>`
}

/** /account/passkeys: the user's passkeys (rename, remove) and adding one after a fresh check. */
export function passkeysPage(options: {
  frame: AccountFrame
  passkeys: readonly Passkey[]
  csrfToken: string
  fresh: boolean
  notice?: PasskeyNotice | undefined
  error?: string | undefined
  confirmError?: string | undefined
  retryAfterSeconds?: number | undefined
}): string {
  const ui = options.frame.ui
  const t = ui.t
  return accountPage(
    t.passkeys,
    options.frame,
    html`<section class="card" aria-labelledby="title">
        <h1 id="title">${t.passkeys}</h1>
        ${options.notice ? html`<p class="notice" role="status">${t[PASSKEY_NOTICES[options.notice]]}</p>` : ''}
        ${alert(ui, options.error)}
        ${
          options.passkeys.length === 0
            ? html`<p>${t.noPasskeyYet}</p>`
            : html`<ul class="passkeys">
                ${options.passkeys.map((p) => passkeyEntry(ui, p, options.csrfToken))}
              </ul>`
        }
      </section>
      ${addSection(ui, { ...options, hasPasskeys: options.passkeys.length > 0 })}`,
    { script: true },
  )
}
