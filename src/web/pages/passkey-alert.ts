import { html } from '../html.js'
import type { Ui } from '../i18n/catalogue.js'

/**
 * The messages our passkey script (passkeys-script.ts) shows when a ceremony fails in the browser, in
 * the page's language: carried by the alert it fills, since the script itself is one static file.
 */
export function passkeyScriptMessages(ui: Ui) {
  return html`data-message-create="${ui.t.passkeyNotSaved}" data-message-get="${ui.t.passkeySignInDidNotWork}"`
}

/** The alert the script fills when a ceremony fails in the browser (hidden until then). */
export function scriptAlert(ui: Ui) {
  return html`<p class="alert" role="alert" data-passkey-alert hidden ${passkeyScriptMessages(ui)}></p>`
}
