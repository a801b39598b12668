import type { Passkey } from '../../accounts/passkey.service.js'
import { html } from '../html.js'
import { type AccountFrame, accountPage, when } from './account-layout.js'
import { tooManySignInAttempts } from './rate-limited.page.js'

export const PASSKEY_NOTICES = {
  added: 'Your passkey was added. You can sign in with it now.',
  renamed: 'Your passkey was renamed.',
  removed: 'Your passkey was removed. It no longer signs you in.',
  confirmed: 'Thank you. You can add a passkey now.',
} as const

export type PasskeyNotice = keyof typeof PASSKEY_NOTICES

const alert = (message: string | undefined) =>
  message === undefined ? '' : html`<p class="alert" role="alert">${message}</p>`

/** The alert the script fills when a ceremony fails in the browser (hidden until then). */
const scriptAlert = html`<p class="alert" role="alert" data-passkey-alert hidden></p>`

function passkeyEntry(p: Passkey, csrfToken: string) {
  const path = `/account/passkeys/${encodeURIComponent(p.id)}`
  return html`<li class="passkey">
    <h2>${p.name}</h2>
    <dl>
      <dt>Added</dt>
      <dd>${when(p.createdAt)}</dd>
      <dt>Last used</dt>
      <dd>${p.lastUsedAt ? when(p.lastUsedAt) : 'never'}</dd>
      <dt>Kept</dt>
      <dd>${p.backedUp ? 'synced to your other devices' : 'on one device'}</dd>
    </dl>
    <form method="post" action="${path}/rename">
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <label for="name-${p.id}">New name for ${p.name}</label>
      <input id="name-${p.id}" name="name" type="text" required maxlength="64" value="${p.name}" />
      <button type="submit" class="small">Rename</button>
    </form>
    <form method="post" action="${path}/remove">
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <button type="submit" class="small danger" aria-label="Remove ${p.name}">Remove</button>
    </form>
  </li>`
}

function addSection(options: {
  csrfToken: string
  fresh: boolean
  hasPasskeys: boolean
  retryAfterSeconds?: number | undefined
  confirmError?: string | undefined
}) {
  if (options.fresh)
    return html`<section class="card" aria-labelledby="add-title">
      <h2 id="add-title">Add a passkey</h2>
      <p>
        A passkey signs you in with your device's screen lock (fingerprint, face or PIN). It works only on this
        site, so a look-alike page cannot use it.
      </p>
      <form method="post" action="/account/passkeys" data-passkey="register" data-options="/api/account/passkeys/options">
        <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
        <input type="hidden" name="response" value="" />
        ${scriptAlert}
        <label for="passkey-name">Name</label>
        <input id="passkey-name" name="name" type="text" required maxlength="64" value="My passkey"
          aria-describedby="passkey-name-hint" />
        <p id="passkey-name-hint" class="muted small">To tell your passkeys apart, e.g. the device it is on.</p>
        <div class="actions">
          <button type="submit" class="primary">Add a passkey</button>
        </div>
      </form>
    </section>`
  return html`<section class="card" aria-labelledby="add-title">
    <h2 id="add-title">Add a passkey</h2>
    <p>First confirm it is you.</p>
    ${alert(options.confirmError)}
    ${alert(options.retryAfterSeconds === undefined ? undefined : tooManySignInAttempts(options.retryAfterSeconds))}
    <form method="post" action="/account/passkeys/confirm">
      <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
      <label for="confirm-password">Your password</label>
      <input id="confirm-password" name="password" type="password" autocomplete="current-password" required
        maxlength="1024" />
      <div class="actions">
        <button type="submit" class="primary">Confirm</button>
      </div>
    </form>
    ${
      options.hasPasskeys
        ? html`<form method="post" action="/account/passkeys/confirm-passkey" class="passkey-choice"
            data-passkey="reauthenticate" data-options="/api/account/passkeys/confirm-options">
            <input type="hidden" name="csrf_token" value="${options.csrfToken}" />
            <input type="hidden" name="response" value="" />
            ${scriptAlert}
            <button type="submit">Confirm with a passkey</button>
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
  return accountPage(
    'Passkeys',
    options.frame,
    html`<section class="card" aria-labelledby="title">
        <h1 id="title">Passkeys</h1>
        ${options.notice ? html`<p class="notice" role="status">${PASSKEY_NOTICES[options.notice]}</p>` : ''}
        ${alert(options.error)}
        ${
          options.passkeys.length === 0
            ? html`<p>You have no passkey yet.</p>`
            : html`<ul class="passkeys">
                ${options.passkeys.map((p) => passkeyEntry(p, options.csrfToken))}
              </ul>`
        }
      </section>
      ${addSection({ ...options, hasPasskeys: options.passkeys.length > 0 })}`,
    { script: true },
  )
}
